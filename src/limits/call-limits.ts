import { GatewayError } from "../core/errors.js";
import { type AppliedLimit, limitsFor, type RateLimitRule, RuleIndex } from "../core/limits/rate-limit-rules.js";
import type { CallLimits, LimitReservation, MeteredCall } from "../core/metering/ports.js";
import type { MinuteCounters, WindowTake } from "./limiter.js";

/** A reservation as these limits keep it: the counters of tokens taken, and their minute. */
interface Reserved extends LimitReservation {
  minute: number;
  keys: string[];
}

/** The 429 of a call over one of its limits, with Retry-After: the seconds until its minute ends. */
function overLimit(limit: AppliedLimit, what: "requests" | "tokens", retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError(
    "GW_ERR_RATE_LIMITED",
    `Too many ${what} per minute for ${limit.of}; retry in ${seconds} s.`,
    { headers: { "retry-after": String(seconds) } },
  );
}

/**
 * The operators' rate limits of metered calls: requests and tokens per minute, per token, per user
 * and per model for each user, with group defaults (see core/limits/rate-limit-rules.ts). A call
 * counts one request and reserves its worst case in tokens; its settlement puts the tokens it used
 * (every bucket) in place of the reservation. Counted in Redis when the gateway has one (exact
 * across instances), else per instance.
 */
export class OperatorCallLimits implements CallLimits {
  private index: { from: RateLimitRule[]; index: RuleIndex } | null = null;

  constructor(
    private readonly rules: () => Promise<RateLimitRule[]>,
    private readonly counters: MinuteCounters,
    private readonly log: { warn(obj: object, msg: string): void },
    private readonly now: () => number = Date.now,
  ) {}

  private async indexed(): Promise<RuleIndex> {
    const rules = await this.rules();
    if (this.index?.from !== rules) this.index = { from: rules, index: new RuleIndex(rules) };
    return this.index.index;
  }

  async reserve(call: Pick<MeteredCall, "caller" | "model">, tokens: number): Promise<LimitReservation | null> {
    const index = await this.indexed();
    if (index.size === 0) return null;
    const limits = limitsFor(index, call.caller, call.model);
    if (limits.length === 0) return null;
    const takes: WindowTake[] = [];
    const why = new Map<WindowTake, [AppliedLimit, "requests" | "tokens"]>();
    for (const limit of limits) {
      if (limit.requestsPerMinute !== null) {
        const take = { key: `${limit.key}:rpm`, limit: limit.requestsPerMinute, amount: 1 };
        takes.push(take);
        why.set(take, [limit, "requests"]);
      }
      if (limit.tokensPerMinute !== null) {
        const take = { key: `${limit.key}:tpm`, limit: limit.tokensPerMinute, amount: tokens };
        takes.push(take);
        why.set(take, [limit, "tokens"]);
      }
    }
    const taken = await this.counters.take(takes, this.now());
    if ("refused" in taken) {
      const [limit, what] = why.get(taken.refused) as [AppliedLimit, "requests" | "tokens"];
      throw overLimit(limit, what, taken.retryAfterMs);
    }
    const keys = takes.filter((t) => t.key.endsWith(":tpm")).map((t) => t.key);
    const reserved: Reserved = { tokens, minute: taken.minute, keys };
    return reserved;
  }

  /** Never rejects (a failure is logged); the engine does not wait for it, a test may. */
  async settle(reservation: LimitReservation, tokens: number): Promise<void> {
    const { minute, keys } = reservation as Reserved;
    const back = reservation.tokens - tokens;
    await Promise.all(
      keys.map((key) =>
        this.counters.give(key, minute, back).catch((err: unknown) => {
          this.log.warn({ err, key }, "a rate limit's reserved tokens could not be settled");
        }),
      ),
    );
  }
}
