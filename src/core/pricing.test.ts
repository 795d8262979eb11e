import { describe, expect, it } from "vitest";
import { holdQuotaForTokens, quotaForCall, quotaForTokens, rateOf, tokenPriceFromRatio } from "./pricing.js";
import { tokenUsage } from "./token-usage.js";

const ratios = { groupRatio: 1, channelRatio: 1, quotaPerUnit: 500_000 };

describe("pricing", () => {
  it("multiplies the base price by the group and channel ratios", () => {
    expect(quotaForCall(0.06, ratios)).toBe(30_000);
    expect(quotaForCall(0.06, { ...ratios, groupRatio: 1.5, channelRatio: 2 })).toBe(90_000);
    expect(quotaForCall(0.1 * 3, ratios)).toBe(150_000);
  });

  it("rounds a fractional quota up, never to free", () => {
    expect(quotaForCall(0.000001, ratios)).toBe(1);
    expect(quotaForCall(0, ratios)).toBe(0);
  });

  it("bills a price set with input, output and a cached ratio as before the buckets", () => {
    const price = tokenPriceFromRatio(0.3, 2.5, 0.1);
    // 1M fresh input = 0.3 units; 1M output = 2.5 units
    expect(quotaForTokens(tokenUsage({ input: 1_000_000 }), price, ratios)).toBe(150_000);
    expect(quotaForTokens(tokenUsage({ output: 1_000_000 }), price, ratios)).toBe(1_250_000);
    // all input cached: 10% of the input price
    expect(quotaForTokens(tokenUsage({ cacheRead: 1_000_000 }), price, ratios)).toBe(15_000);
    expect(quotaForTokens(tokenUsage({ input: 1000, output: 500 }), price, { ...ratios, groupRatio: 2 })).toBe(
      Math.ceil(((1000 * 0.3 + 500 * 2.5) / 1e6) * 500_000 * 2),
    );
    // The old rule, by hand: (prompt - cached) x in + cached x in x ratio + output x out, for every split.
    for (const [prompt, cached, output] of [
      [12_345, 6_789, 4_321],
      [7, 3, 1],
      [999_999, 999_999, 0],
    ] as const) {
      const old = Math.ceil(
        Math.round((((prompt - cached) * 0.3 + cached * 0.3 * 0.1 + output * 2.5) / 1e6) * 500_000 * 1e6) / 1e6,
      );
      expect(quotaForTokens(tokenUsage({ input: prompt - cached, cacheRead: cached, output }), price, ratios)).toBe(
        old,
      );
    }
  });

  it("leaves a cached ratio of 1 as an empty cache-read rate, falling back to input", () => {
    expect(tokenPriceFromRatio(2, 8, 1)).toEqual({ input: 2, output: 8 });
  });

  it("falls back from each empty rate as documented", () => {
    const price = { input: 3, output: 15 };
    expect(rateOf(price, "cacheRead")).toBe(3);
    expect(rateOf(price, "cacheWrite5m")).toBe(3);
    expect(rateOf(price, "cacheWrite1h")).toBe(3);
    expect(rateOf({ ...price, cacheWrite5m: 3.75 }, "cacheWrite1h")).toBe(3.75);
    expect(rateOf(price, "audioInput")).toBe(3);
    expect(rateOf(price, "reasoning")).toBe(15);
    expect(rateOf(price, "audioOutput")).toBe(15);
    expect(rateOf({ ...price, cacheRead: null }, "cacheRead")).toBe(3);
  });

  // Claude Sonnet's price sheet: $3 input, $15 output, $3.75 a 5-minute cache write, $6 a 1-hour
  // one, $0.30 a cache read, per million tokens.
  const sonnet = { input: 3, output: 15, cacheWrite5m: 3.75, cacheWrite1h: 6, cacheRead: 0.3 };

  it("bills Anthropic's cache writes and reads at their own rates", () => {
    // 1,200 fresh input, 50,000 read from cache, 10,000 written for 5 minutes, 2,000 for 1 hour, 800 output:
    // 1200 x 3 + 50000 x 0.30 + 10000 x 3.75 + 2000 x 6 + 800 x 15 = 3600 + 15000 + 37500 + 12000 + 12000
    // = 80,100 per million = $0.0801 = 40,050 quota.
    const usage = tokenUsage({
      input: 1_200,
      cacheRead: 50_000,
      cacheWrite5m: 10_000,
      cacheWrite1h: 2_000,
      output: 800,
    });
    expect(quotaForTokens(usage, sonnet, ratios)).toBe(40_050);
    // Without cache rates (a price that only sets input and output), every prompt token is input.
    expect(quotaForTokens(usage, { input: 3, output: 15 }, ratios)).toBe(Math.ceil((63_200 * 3 + 800 * 15) / 2));
  });

  it("bills OpenAI's cached input and reasoning, and audio at its rates", () => {
    // gpt-4o-mini-like sheet: $0.15 input, $0.075 cached, $0.60 output; reasoning bills as output.
    // 2,000 prompt of which 1,536 cached, 300 completion of which 200 reasoning:
    // 464 x 0.15 + 1536 x 0.075 + 100 x 0.6 + 200 x 0.6 = 69.6 + 115.2 + 60 + 120 = 364.8 per million
    // = $0.0003648 = 182.4 quota, rounded up once: 183.
    const price = { input: 0.15, output: 0.6, cacheRead: 0.075 };
    const usage = tokenUsage({ input: 464, cacheRead: 1_536, output: 100, reasoning: 200 });
    expect(quotaForTokens(usage, price, ratios)).toBe(183);
    // Audio: $2.50 text in, $40 audio in, $10 text out, $80 audio out.
    // 100 x 2.5 + 1000 x 40 + 50 x 10 + 500 x 80 = 250 + 40000 + 500 + 40000 = 80,750 per million = 40,375 quota.
    const audio = { input: 2.5, output: 10, audioInput: 40, audioOutput: 80 };
    expect(
      quotaForTokens(tokenUsage({ input: 100, audioInput: 1000, output: 50, audioOutput: 500 }), audio, ratios),
    ).toBe(40_375);
  });

  it("bills Gemini's thoughts as output unless reasoning has its own rate", () => {
    // gemini-2.5-flash: $0.30 input, $2.50 output (thinking included), cached at $0.03.
    // 10,000 prompt of which 4,000 cached, 1,000 candidates, 3,000 thoughts:
    // 6000 x 0.3 + 4000 x 0.03 + 4000 x 2.5 = 1800 + 120 + 10000 = 11,920 per million = 5,960 quota.
    const flash = { input: 0.3, output: 2.5, cacheRead: 0.03 };
    const usage = tokenUsage({ input: 6_000, cacheRead: 4_000, output: 1_000, reasoning: 3_000 });
    expect(quotaForTokens(usage, flash, ratios)).toBe(5_960);
    // A reasoning rate of $3.50: 1800 + 120 + 2500 + 10500 = 14,920 per million = 7,460 quota.
    expect(quotaForTokens(usage, { ...flash, reasoning: 3.5 }, ratios)).toBe(7_460);
  });

  it("sums every bucket exactly and rounds up once", () => {
    // Each bucket alone is a fraction of a quota; rounded one by one they would make 3, summed 1.
    const price = { input: 1, output: 1, cacheRead: 0.5, reasoning: 1 };
    const usage = tokenUsage({ input: 1, cacheRead: 1, output: 1 });
    // (1 + 0.5 + 1) / 1e6 x 500,000 = 1.25 -> 2
    expect(quotaForTokens(usage, price, ratios)).toBe(2);
    expect(quotaForTokens(tokenUsage({ input: 1, output: 1 }), price, ratios)).toBe(1);
  });

  it("holds the prompt at the dearest input-side rate and the output at the dearest output-side rate", () => {
    // 10,000 prompt tokens might all be written to a 1-hour cache ($6), 1,000 output all at $15:
    // 10000 x 6 + 1000 x 15 = 75,000 per million = 37,500 quota.
    const worst = tokenUsage({ input: 10_000, output: 1_000 });
    expect(holdQuotaForTokens(worst, sonnet, ratios)).toBe(37_500);
    // A dearer reasoning rate makes the output side dearer.
    expect(holdQuotaForTokens(worst, { ...sonnet, reasoning: 20 }, ratios)).toBe(Math.ceil((60_000 + 20_000) / 2));
    // Never below what any landing of the same tokens would settle to.
    for (const landing of [
      tokenUsage({ cacheWrite1h: 10_000, output: 1_000 }),
      tokenUsage({ cacheRead: 10_000, reasoning: 1_000 }),
      tokenUsage({ input: 5_000, cacheWrite5m: 5_000, output: 1_000 }),
    ]) {
      expect(quotaForTokens(landing, sonnet, ratios)).toBeLessThanOrEqual(holdQuotaForTokens(worst, sonnet, ratios));
    }
  });
});
