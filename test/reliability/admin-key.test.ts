import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeEach, describe, expect, it, vi } from "vitest";

/**
 * The admin key is compared in constant time. Measuring response times to show it would be flaky
 * on a shared machine (scheduling noise dwarfs a string comparison), so this shows the property
 * that makes the comparison constant-time instead: whatever key is presented, of whatever length,
 * the only comparison made is one `timingSafeEqual` of two SHA-256 digests of equal length (32
 * bytes), so neither the length nor the first differing byte of a guess changes the work done.
 */
const compared = vi.hoisted(() => [] as Array<[number, number]>);

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.push([a.byteLength, b.byteLength]);
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

  it("never compares the plain key with a string comparison", () => {
    const source = readFileSync(fileURLToPath(new URL("../../src/auth/admin-key.ts", import.meta.url)), "utf8");
    const body = source.slice(source.indexOf("export function adminKeyMatches"));
    expect(body).toContain("timingSafeEqual(");
    expect(body).toContain("sha256Hex(presented");
    // No early exit on the presented key itself (its length or contents) before the digest compare.
    expect(body.split("timingSafeEqual(")[0]).not.toMatch(/presented\s*(===|!==|==|!=)|presented\.length/);
  });
});
