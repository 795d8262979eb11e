import { beforeEach, describe, expect, it, vi } from "vitest";

/**
 * The admin key is compared in constant time. Measuring response times to show it would be flaky
 * on a shared machine (scheduling noise dwarfs a string comparison), so this shows the property
 * that makes the comparison constant-time instead: whatever key is presented, of whatever length,
 * the only comparison made is one `timingSafeEqual` of two SHA-256 digests of equal length (32
 * bytes), so neither the length nor the first differing byte of a guess changes the work done.
 */
const compared = vi.hoisted(() => [] as Array<[number, number]>);
/** The two byte strings of each comparison, as hex. */
const digests = vi.hoisted(() => [] as Array<[string, string]>);

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.push([a.byteLength, b.byteLength]);
      const hex = (v: NodeJS.ArrayBufferView) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex");
      digests.push([hex(a), hex(b)]);
      return actual.timingSafeEqual(a, b);
    },
  };
});

const { adminKeyMatches } = await import("../../src/auth/admin-key.js");
const { sha256Hex } = await import("../../src/core/ids.js");

const KEY = "adm-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL";
const HASH = sha256Hex(KEY);

describe("admin key comparison", () => {
  beforeEach(() => {
    compared.length = 0;
    digests.length = 0;
  });

  it("accepts the key and only the key", () => {
    expect(adminKeyMatches(KEY, HASH)).toBe(true);
    for (const guess of [`${KEY}x`, KEY.slice(0, -1), KEY.toUpperCase(), ` ${KEY}`, "a", "x".repeat(10_000)]) {
      expect(adminKeyMatches(guess, HASH), guess.slice(0, 20)).toBe(false);
    }
    expect(adminKeyMatches(null, HASH)).toBe(false);
    expect(adminKeyMatches("", HASH)).toBe(false);
  });

  it("compares fixed-length digests with timingSafeEqual whatever the length of the guess", () => {
    const guesses = [KEY, "a", KEY.slice(0, 10), `${KEY}${KEY}`, "x".repeat(100_000), "ä".repeat(7)];
    for (const guess of guesses) adminKeyMatches(guess, HASH);
    expect(compared).toEqual(guesses.map(() => [32, 32]));
  });

  it("hashes every presented key, a missing or empty one included, and compares only the digests", () => {
    // Whatever is presented, the work is the same: one SHA-256 of it, then one constant-time
    // comparison of that digest with the stored one. No branch on the key itself comes first.
    const guesses = [null, "", KEY, `${KEY}x`, "a", "x".repeat(100_000)];
    for (const guess of guesses) adminKeyMatches(guess, HASH);
    expect(compared).toEqual(guesses.map(() => [32, 32]));
    expect(digests).toEqual(guesses.map((guess) => [sha256Hex(guess ?? ""), HASH]));
  });
});
