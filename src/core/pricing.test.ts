import { describe, expect, it } from "vitest";
import { quotaForCall, quotaForTokens } from "./pricing.js";

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

  it("prices tokens per million with cached input at its ratio", () => {
    const price = { inputPerMillion: 0.3, outputPerMillion: 2.5, cachedRatio: 0.1 };
    // 1M fresh input = 0.3 units; 1M output = 2.5 units
    expect(quotaForTokens({ promptTokens: 1_000_000, outputTokens: 0, cachedTokens: 0 }, price, ratios)).toBe(150_000);
    expect(quotaForTokens({ promptTokens: 0, outputTokens: 1_000_000, cachedTokens: 0 }, price, ratios)).toBe(
      1_250_000,
    );
    // all input cached: 10% of the input price
    expect(quotaForTokens({ promptTokens: 1_000_000, outputTokens: 0, cachedTokens: 1_000_000 }, price, ratios)).toBe(
      15_000,
    );
    expect(
      quotaForTokens({ promptTokens: 1000, outputTokens: 500, cachedTokens: 0 }, price, { ...ratios, groupRatio: 2 }),
    ).toBe(Math.ceil(((1000 * 0.3 + 500 * 2.5) / 1e6) * 500_000 * 2));
  });
});
