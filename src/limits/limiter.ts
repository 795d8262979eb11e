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

/** One count a call asks of a minute's counter: its key, its limit, how much it takes. */
export interface WindowTake {
  key: string;
  limit: number;
  amount: number;
}

/** A take refused: which count was over, and the milliseconds until its minute ends. */
export interface WindowRefusal {
  refused: WindowTake;
  retryAfterMs: number;
}

const MINUTE_MS = 60_000;

// KEYS: the counters of one minute; ARGV: ttl (ms), then each key's limit and amount. Takes all or
// nothing: a counter above zero that the amount would take past its limit refuses the whole take.
const TAKE_SCRIPT = `
for i, key in ipairs(KEYS) do
  local used = tonumber(redis.call('GET', key) or '0')
  if used > 0 and used + tonumber(ARGV[2 * i + 1]) > tonumber(ARGV[2 * i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[2 * i + 1])
  redis.call('PEXPIRE', key, ARGV[1])
end
return 0`;

// KEYS[1]: a counter; ARGV[1]: what to give back (negative: to take more). A counter whose minute
// is gone is left gone.
const GIVE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], 0 - tonumber(ARGV[1])) end
return 0`;

/**
 * Counters per key and per minute of the clock (fixed windows: a counter belongs to the minute
 * its take was let in), for requests and tokens per minute. A take is all or nothing over several
 * counters: refused when a counter that already counts something would pass its limit (so a lone
 * call larger than a whole limit passes in an empty minute, and nothing else with it). In Redis
 * when the gateway has one (one script per take: exact across every instance), else in this
 * process's memory. Time is the caller's (`now`), never the process clock.
 */
export class MinuteCounters {
  private readonly memory = new Map<number, Map<string, number>>();

  constructor(
    private readonly redis: Redis | null,
    private readonly keyPrefix: string,
  ) {}

  static minuteOf(now: number): number {
    return Math.floor(now / MINUTE_MS);
  }

  private redisKey(key: string, minute: number): string {
    return `${this.keyPrefix}:lim:${key}:${minute}`;
  }

  /** Takes every amount in the minute of `now`, or none of them. */
  async take(takes: WindowTake[], now: number): Promise<{ minute: number } | WindowRefusal> {
    const minute = MinuteCounters.minuteOf(now);
    const retryAfterMs = (minute + 1) * MINUTE_MS - now;
    if (this.redis) {
      const args = [String(2 * MINUTE_MS), ...takes.flatMap((t) => [String(t.limit), String(t.amount)])];
      const keys = takes.map((t) => this.redisKey(t.key, minute));
      const over = Number(await this.redis.eval(TAKE_SCRIPT, keys.length, ...keys, ...args));
      const refused = takes[over - 1];
      return refused ? { refused, retryAfterMs } : { minute };
    }
    for (const old of this.memory.keys()) if (old < minute - 1) this.memory.delete(old);
    let counters = this.memory.get(minute);
    if (!counters) {
      counters = new Map();
      this.memory.set(minute, counters);
    }
    for (const t of takes) {
      const used = counters.get(t.key) ?? 0;
      if (used > 0 && used + t.amount > t.limit) return { refused: t, retryAfterMs };
    }
    for (const t of takes) counters.set(t.key, (counters.get(t.key) ?? 0) + t.amount);
    return { minute };
  }

  /** Gives `amount` back to a key's counter of `minute` (a negative amount takes more); gone minutes stay gone. */
  async give(key: string, minute: number, amount: number): Promise<void> {
    if (amount === 0) return;
    if (this.redis) {
      await this.redis.eval(GIVE_SCRIPT, 1, this.redisKey(key, minute), String(amount));
      return;
    }
    const counters = this.memory.get(minute);
    const used = counters?.get(key);
    if (counters && used !== undefined) counters.set(key, used - amount);
  }

  /** What a key's counter of the minute of `now` holds (for tests and the docs' examples). */
  async used(key: string, now: number): Promise<number> {
    const minute = MinuteCounters.minuteOf(now);
    if (this.redis) return Number((await this.redis.get(this.redisKey(key, minute))) ?? 0);
    return this.memory.get(minute)?.get(key) ?? 0;
  }
}
