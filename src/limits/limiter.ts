import type { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { GatewayError } from "../core/errors.js";

export interface LimiterSettings {
  /** How many points a key has per window. */
  points: number;
  /** The window, in seconds. */
  duration: number;
  /** The gateway's Redis key prefix; the counters are kept under `<keyPrefix>:rl:<name>`. */
  keyPrefix: string;
  name: string;
}

/**
 * A counter of points per key over a window: in memory for one instance, or in Redis when the
 * gateway has one, so the count holds across every instance.
 */
export function makeLimiter(settings: LimiterSettings, redis: Redis | null): RateLimiterAbstract {
  const { points, duration, keyPrefix, name } = settings;
  return redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points,
        duration,
        keyPrefix: `${keyPrefix}:rl:${name}`,
        // When Redis is unreachable, limit in memory instead of refusing everyone.
        insuranceLimiter: new RateLimiterMemory({ points, duration }),
      })
    : new RateLimiterMemory({ points, duration, keyPrefix: name });
}

/** The key's count when it has used every point of its window, else null. */
export async function exhausted(limiter: RateLimiterAbstract, key: string): Promise<RateLimiterRes | null> {
  const res = await limiter.get(key);
  return res && res.consumedPoints >= limiter.points ? res : null;
}

/** Counts one point of a key; going over the limit is not an error here (the next check refuses). */
export async function countOne(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
  }
}

/** A 429 saying why, with Retry-After: the seconds until the window lets the key through again. */
export function tooMany(message: string, res: RateLimiterRes): GatewayError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new GatewayError("GW_ERR_RATE_LIMITED", message, { headers: { "retry-after": String(seconds) } });
}
