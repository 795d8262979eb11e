import type { Redis } from "ioredis";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { countOne, exhausted, makeLimiter, tooMany } from "./limiter.js";

/** Failed redemptions a key (a user, an address) may make per window, and the window (seconds). */
export const REDEMPTION_FAILURES = { points: 10, windowSeconds: 15 * 60 };

/**
 * Slows the guessing of redemption codes: failed redemptions (an unknown, used, expired or
 * disabled code) are counted per key over 15 minutes; a key over the limit is refused 429 with
 * Retry-After, a good code too, until the window moves on. Shared through Redis when the gateway
 * has one, so every instance counts alike.
 */
export class RedemptionLimits {
  private readonly failures: RateLimiterAbstract;

  constructor(settings: { keyPrefix: string; points?: number }, redis: Redis | null) {
    this.failures = makeLimiter(
      {
        points: settings.points ?? REDEMPTION_FAILURES.points,
        duration: REDEMPTION_FAILURES.windowSeconds,
        keyPrefix: settings.keyPrefix,
        name: "redeem-fail",
      },
      redis,
    );
  }

  async assertAllowed(keys: string[]): Promise<void> {
    for (const key of keys) {
      const res = await exhausted(this.failures, key);
      if (res) throw tooMany("Too many failed redemptions; retry later.", res);
    }
  }

  async recordFailure(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => countOne(this.failures, key)));
  }
}
