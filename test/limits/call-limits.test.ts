import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/core/errors.js";
import type { RateLimitRule } from "../../src/core/limits/rate-limit-rules.js";
import { OperatorCallLimits } from "../../src/limits/call-limits.js";
import { MinuteCounters } from "../../src/limits/limiter.js";

const REDIS_URL = process.env.TEST_REDIS_URL;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const quiet = { warn() {} };

const rule = (r: Partial<RateLimitRule> & Pick<RateLimitRule, "scope">): RateLimitRule => ({
  subject: "",
  group: "",
  requestsPerMinute: null,
  tokensPerMinute: null,
  ...r,
});

/** Limits over `rules` with a clock the test moves. */
function limitsOf(rules: RateLimitRule[], counters = new MinuteCounters(null, "t")) {
  const clock = { now: T0 };
  const limits = new OperatorCallLimits(
    async () => rules,
    counters,
    quiet,
    () => clock.now,
  );
  return { limits, clock, counters };
}

const call = (userId: number, tokenId: number, model = "m", group = "default") => ({
  caller: { userId, tokenId, group },
  model,
});

/** The 429 of a refused reservation, or null when it passed. */
async function refusal(p: Promise<unknown>): Promise<GatewayError | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

describe("rate limits of metered calls", () => {
  it("refuses a token's request past its requests per minute, with Retry-After to the minute's end", async () => {
    const { limits, clock } = limitsOf([rule({ scope: "token", subject: "7", requestsPerMinute: 2 })]);
    clock.now = T0 + 45_000;
    expect(await refusal(limits.reserve(call(1, 7), 10))).toBeNull();
    expect(await refusal(limits.reserve(call(1, 7), 10))).toBeNull();
    const refused = await refusal(limits.reserve(call(1, 7), 10));
    expect(refused?.status).toBe(429);
    expect(refused?.headers?.["retry-after"]).toBe("15");
    expect(refused?.message).toContain("requests per minute for this token");
    // Another token of the same user is not counted with it.
    expect(await refusal(limits.reserve(call(1, 8), 10))).toBeNull();
    clock.now = T0 + 60_000;
    expect(await refusal(limits.reserve(call(1, 7), 10))).toBeNull();
  });

  it("reserves a call's worst case in tokens and keeps what it used at settlement", async () => {
    const { limits, counters, clock } = limitsOf([rule({ scope: "user", subject: "3", tokensPerMinute: 1000 })]);
    const first = await limits.reserve(call(3, 1), 800);
    expect(await counters.used("user:3:tpm", clock.now)).toBe(800);
    // While the first runs, its worst case leaves no room for a second of 300.
    expect((await refusal(limits.reserve(call(3, 2), 300)))?.message).toContain("tokens per minute for this user");
    await limits.settle(first as NonNullable<typeof first>, 120);
    expect(await counters.used("user:3:tpm", clock.now)).toBe(120);
    expect(await refusal(limits.reserve(call(3, 2), 300))).toBeNull();
    // A refunded call gives back all it reserved.
    const third = await limits.reserve(call(3, 1), 500);
    await limits.settle(third as NonNullable<typeof third>, 0);
    expect(await counters.used("user:3:tpm", clock.now)).toBe(420);
  });

  it("lets a lone call larger than the whole limit through an empty minute, and nothing after it", async () => {
    const { limits } = limitsOf([rule({ scope: "user", subject: "3", tokensPerMinute: 1000 })]);
    expect(await refusal(limits.reserve(call(3, 1), 5000))).toBeNull();
    expect((await refusal(limits.reserve(call(3, 1), 1)))?.status).toBe(429);
  });

  it("applies a group's default to tokens and users without their own, and an own rule replaces it", async () => {
    const { limits } = limitsOf([
      rule({ scope: "user", group: "free", requestsPerMinute: 1 }),
      rule({ scope: "user", subject: "9", tokensPerMinute: 100_000 }),
    ]);
    expect(await refusal(limits.reserve(call(5, 50, "m", "free"), 1))).toBeNull();
    expect((await refusal(limits.reserve(call(5, 51, "m", "free"), 1)))?.message).toContain("this user");
    // Another group has no default; user 9's own rule has no request limit.
    expect(await refusal(limits.reserve(call(6, 60, "m", "paid"), 1))).toBeNull();
    expect(await refusal(limits.reserve(call(6, 60, "m", "paid"), 1))).toBeNull();
    for (let i = 0; i < 3; i++) expect(await refusal(limits.reserve(call(9, 90, "m", "free"), 1))).toBeNull();
  });

  it("counts a model's limit per user, its group's rule before the rule of every group", async () => {
    const { limits } = limitsOf([
      rule({ scope: "model", subject: "big", requestsPerMinute: 1 }),
      rule({ scope: "model", subject: "big", group: "vip", requestsPerMinute: 3 }),
    ]);
    expect(await refusal(limits.reserve(call(1, 1, "big"), 1))).toBeNull();
    expect((await refusal(limits.reserve(call(1, 1, "big"), 1)))?.message).toContain('model "big" for this user');
    expect(await refusal(limits.reserve(call(1, 1, "small"), 1))).toBeNull();
    expect(await refusal(limits.reserve(call(2, 2, "big"), 1))).toBeNull();
    for (let i = 0; i < 3; i++) expect(await refusal(limits.reserve(call(3, 3, "big", "vip"), 1))).toBeNull();
    expect((await refusal(limits.reserve(call(3, 3, "big", "vip"), 1)))?.status).toBe(429);
  });

  it("takes nothing from any counter when one of the call's limits refuses it", async () => {
    const { limits, counters, clock } = limitsOf([
      rule({ scope: "token", subject: "1", tokensPerMinute: 10_000 }),
      rule({ scope: "user", subject: "1", requestsPerMinute: 1 }),
    ]);
    await limits.reserve(call(1, 1), 100);
    expect((await refusal(limits.reserve(call(1, 1), 100)))?.status).toBe(429);
    expect(await counters.used("token:1:tpm", clock.now)).toBe(100);
  });
});

describe.skipIf(!REDIS_URL)("rate limits across two instances on Redis", () => {
  const clients: Redis[] = [];
  const prefix = `limits-test-${process.pid}-${Date.now()}`;
  afterAll(async () => {
    const keys = await clients[0]?.keys(`${prefix}:*`);
    if (keys && keys.length > 0) await clients[0]?.del(...keys);
    for (const c of clients) c.disconnect();
  });
  const instance = (rules: RateLimitRule[], clock: { now: number }) => {
    const redis = new Redis(REDIS_URL as string);
    clients.push(redis);
    return new OperatorCallLimits(
      async () => rules,
      new MinuteCounters(redis, prefix),
      quiet,
      () => clock.now,
    );
  };

  it("lets exactly the limit through, whichever instance each request reaches", async () => {
    const rules = [rule({ scope: "user", subject: "42", requestsPerMinute: 7, tokensPerMinute: 1_000_000 })];
    const clock = { now: T0 + 30_000 };
    const a = instance(rules, clock);
    const b = instance(rules, clock);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => refusal((i % 2 ? a : b).reserve(call(42, i + 1), 10))),
    );
    expect(outcomes.filter((o) => o === null)).toHaveLength(7);
    const refused = outcomes.find((o) => o !== null);
    expect(refused?.headers?.["retry-after"]).toBe("30");
    // The next minute (injected) starts from zero on both.
    clock.now = T0 + 60_000;
    expect(await refusal(b.reserve(call(42, 1), 10))).toBeNull();
  });

  it("settles on one instance what the other reserved: the tokens used stay counted", async () => {
    const rules = [rule({ scope: "model", subject: "m2", tokensPerMinute: 1000 })];
    const clock = { now: T0 + 5_000 };
    const a = instance(rules, clock);
    const b = instance(rules, clock);
    const held = await a.reserve(call(43, 1, "m2"), 900);
    expect((await refusal(b.reserve(call(43, 2, "m2"), 200)))?.status).toBe(429);
    await a.settle(held as NonNullable<typeof held>, 300);
    expect(await refusal(b.reserve(call(43, 2, "m2"), 700))).toBeNull();
    expect((await refusal(a.reserve(call(43, 3, "m2"), 1)))?.status).toBe(429);
  });
});
