import type { FastifyBaseLogger } from "fastify";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { IdempotencyKeys } from "./idempotency-keys.js";

/** How often remembered answers past their 24 hours are deleted. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes remembered answers past their retention. Expired rows are already ignored by
 * `IdempotencyKeys.run`; this only keeps the table small. Any number of instances may run it.
 */
export class ExpiredKeysSweeper extends PeriodicService {
  readonly name = "idempotency-key-sweeper";

  constructor(
    private readonly keys: IdempotencyKeys,
    private readonly logger: FastifyBaseLogger,
    private readonly everyMs = SWEEP_INTERVAL_MS,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.everyMs;
  }

  protected round(): Promise<number> {
    return this.sweep();
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
