/** Runs at most `limit` jobs at once; the rest wait in order. The limit may change between jobs. */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(public limit: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active += 1;
    try {
      return await job();
    } finally {
      this.active -= 1;
      if (this.active < this.limit) this.waiting.shift()?.();
    }
  }
}
