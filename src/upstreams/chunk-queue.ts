/**
 * The chunks of an answer's body between the socket and their reader: chunks wait here for the
 * reader, or the reader waits here for the next chunk. The end and a failure are told to the
 * reader only once every chunk before them is read. Holding back the source (pausing it when too
 * many chunks wait) is its owner's part, with `length`.
 */
export class ChunkQueue {
  private readonly chunks: Buffer[] = [];
  private ended = false;
  private failure: unknown = null;
  private waiting: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: unknown) => void } | null = null;

  /** Chunks waiting for the reader. */
  get length(): number {
    return this.chunks.length;
  }

  /** Nothing more for the reader: every chunk read, and the body ended or failed. */
  get finished(): boolean {
    return this.chunks.length === 0 && (this.ended || this.failure !== null);
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.settle();
  }

  /** The body ended. */
  end(): void {
    this.ended = true;
    this.settle();
  }

  /** The body failed with `err` (the first failure is the one told). */
  fail(err: unknown): void {
    this.failure ??= err;
    this.settle();
  }

  /** The reader is done: the chunks not read are dropped, and a waiting read ends. */
  drop(): void {
    this.chunks.length = 0;
    this.ended = true;
    this.settle();
  }

  /** The next chunk, or the end, or the failure; waits while there is none of them yet. */
  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) return Promise.resolve({ value: chunk, done: false });
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  private settle(): void {
    const w = this.waiting;
    if (!w) return;
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      this.waiting = null;
      w.resolve({ value: chunk, done: false });
    } else if (this.failure !== null) {
      this.waiting = null;
      w.reject(this.failure);
    } else if (this.ended) {
      this.waiting = null;
      w.resolve({ value: undefined, done: true });
    }
  }
}
