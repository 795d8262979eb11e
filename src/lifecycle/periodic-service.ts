import type { BackgroundService } from "./background-service.js";

/**
 * A background service that runs one round every interval, never two rounds at once; `stop`
 * waits for the round in progress. A round handles (logs) its own errors.
 */
export abstract class PeriodicService implements BackgroundService {
  abstract readonly name: string;
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;

  /** Time between two rounds (ms). */
  protected abstract intervalMs(): number;

  /** One round of work. */
  protected abstract round(): Promise<unknown>;

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.current) return;
      this.current = this.round()
        .then(() => undefined)
        .finally(() => {
          this.current = null;
        });
    }, this.intervalMs());
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.current;
  }
}
