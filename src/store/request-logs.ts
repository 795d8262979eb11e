import type { Insertable, Kysely } from "kysely";
import type { BackgroundService } from "../background-service.js";
import type { Database, RequestLogsTable } from "./schema.js";

export type RequestLogEntry = Insertable<RequestLogsTable>;

/**
 * Writes request-log rows off the hot path: `log()` only queues; a timer flushes the queue in
 * one multi-row insert. A row that cannot be written is dropped with a warning, never retried
 * into a growing queue.
 */
export class RequestLogWriter implements BackgroundService {
  readonly name = "request-log-writer";
  private queue: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onError: (err: unknown) => void,
    private readonly options: { intervalMs: number; maxBatch: number; maxQueue: number } = {
      intervalMs: 200,
      maxBatch: 500,
      maxQueue: 100_000,
    },
  ) {}

  log(entry: RequestLogEntry): void {
    if (this.queue.length >= this.options.maxQueue) return;
    this.queue.push(entry);
    if (this.queue.length >= this.options.maxBatch) void this.flush();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Writes everything queued so far; resolves when it is in the store. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxBatch);
        try {
          await this.db.insertInto("request_logs").values(batch).execute();
        } catch (err) {
          this.onError(err);
        }
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
