import { describe, expect, it } from "vitest";
import { quotaOfBatch } from "../admin/redemption-codes.js";
import { codeHash, newRedemptionCode, normalizeCode, shownCode } from "./codes.js";

describe("redemption codes", () => {
  it("makes codes of the prefix and 20 random characters without I, L, O or U", () => {
    const codes = Array.from({ length: 200 }, () => newRedemptionCode("GIFT"));
    for (const code of codes) expect(code).toMatch(/^GIFT(-[0-9A-HJKMNP-TV-Z]{5}){4}$/);
    expect(new Set(codes).size).toBe(codes.length);
    expect(newRedemptionCode("")).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
  });

  it("hashes a code as typed in any case, with or without dashes and spaces, alike", () => {
    const code = newRedemptionCode("VIP");
    expect(codeHash(code.toLowerCase())).toBe(codeHash(code));
    expect(codeHash(` ${code.replaceAll("-", " ")} `)).toBe(codeHash(code));
    expect(normalizeCode(code)).not.toContain("-");
    expect(codeHash(code)).not.toContain(normalizeCode(code));
    expect(codeHash(newRedemptionCode("VIP"))).not.toBe(codeHash(code));
  });

  it("shows the prefix, four characters and the last four", () => {
    expect(shownCode("GIFT-7KQ2M-X9D4T-H1VRB-03ZNE")).toBe("GIFT-7KQ2…3ZNE");
    expect(shownCode("7KQ2M-X9D4T-H1VRB-03ZNE")).toBe("7KQ2…3ZNE");
  });

  it("converts an amount in currency to quota, refusing what does not fit", () => {
    expect(quotaOfBatch({ amount: 2.5 }, 500_000)).toBe(1_250_000);
    expect(quotaOfBatch({ amount: 0.7 }, 3)).toBe(2);
    expect(quotaOfBatch({ quota: 42 }, 500_000)).toBe(42);
    expect(() => quotaOfBatch({ amount: 1e12 }, 500_000)).toThrow(/amount/);
    expect(() => quotaOfBatch({ amount: 0.000001 }, 1000)).toThrow(/amount/);
    expect(() => quotaOfBatch({ amount: 1, quota: 1 }, 1000)).toThrow(/amount/);
    expect(() => quotaOfBatch({}, 1000)).toThrow(/quota/);
  });
});
