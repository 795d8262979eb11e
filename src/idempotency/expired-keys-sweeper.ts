import type { FastifyBaseLogger } from "fastify";
import type { BackgroundService } from "../background-service.js";
import type { IdempotencyKeys } from "./idempotency-keys.js";

/** How often remembered answers past their 24 hours are deleted. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes remembered answers past their retention. Expired rows are already ignored by
 * `IdempotencyKeys.run`; this only keeps the table small. Any number of instances may run it.
 */
export class ExpiredKeysSweeper implements BackgroundService {
  readonly name = "idempotency-key-sweeper";
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;

  constructor(
    private readonly keys: IdempotencyKeys,
    private readonly logger: FastifyBaseLogger,
    private readonly intervalMs = SWEEP_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.current) return;
      this.current = this.sweep()
        .then(() => undefined)
        .finally(() => {
          this.current = null;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.current;
  }

  /** One pass; returns how many answers were forgotten. */
  async sweep(): Promise<number> {
    try {
      return await this.keys.deleteExpired();
    } catch (err) {
      this.logger.warn({ err }, "deleting expired idempotency keys failed");
      return 0;
    }
  }
}
