import { describe, expect, it } from "vitest";
import { keyDeathReason, keysFromText, keysInTurn, maskKey, probeDelayMs } from "./key-pool.js";
import { UpstreamError } from "./upstream-error.js";

const key = (id: number, state: { enabled?: boolean; deadAt?: number | null } = {}) => ({
  id,
  enabled: state.enabled ?? true,
  deadAt: state.deadAt ?? null,
});

describe("key pools", () => {
  it("rotates round robin over the live keys only, the others following the pick", () => {
    const pool = [key(1), key(2, { deadAt: 5 }), key(3), key(4, { enabled: false }), key(5)];
    expect([0, 1, 2, 3].map((turn) => keysInTurn(pool, "round_robin", turn).map((k) => k.id))).toEqual([
      [1, 3, 5],
      [3, 5, 1],
      [5, 1, 3],
      [1, 3, 5],
    ]);
    expect(keysInTurn(pool, "random", 0, () => 0.7).map((k) => k.id)).toEqual([5, 1, 3]);
    expect(keysInTurn([key(1, { deadAt: 1 })], "round_robin", 0)).toEqual([]);
  });

  it("kills a key on a refusal or an exhausted quota, not on a plain rate limit or a bad request", () => {
    expect(keyDeathReason(new UpstreamError("auth", "bad key", { status: 401 }))).toBe(
      "key refused (HTTP 401): bad key",
    );
    expect(keyDeathReason(new UpstreamError("refused", "pay", { status: 402 }))).toMatch(/^quota exhausted/);
    expect(
      keyDeathReason(new UpstreamError("retryable", "You exceeded your current quota, check billing", { status: 429 })),
    ).toMatch(/^quota exhausted \(HTTP 429\)/);
    expect(keyDeathReason(new UpstreamError("auth", "insufficient_quota", { status: 403 }))).toMatch(/^quota/);
    // A 400 may echo the client's prompt: its words never kill a key.
    expect(keyDeathReason(new UpstreamError("refused", "bad value: insufficient balance", { status: 400 }))).toBeNull();
    expect(keyDeathReason(new UpstreamError("retryable", "Too many requests", { status: 429 }))).toBeNull();
    expect(keyDeathReason(new UpstreamError("refused", "bad prompt", { status: 400 }))).toBeNull();
    expect(keyDeathReason(new UpstreamError("retryable", "connection refused"))).toBeNull();
  });

  it("reads keys from a text, one a line, and masks them to their last four characters", () => {
    expect(keysFromText("# comment\r\n  sk-a  \n\nsk-b\nsk-a\n")).toEqual(["sk-a", "sk-b"]);
    expect(maskKey("sk-proj-0123456789abcdef")).toBe("****cdef");
    expect(maskKey("short-key")).toBe("****");
  });

  it("waits longer after each failed probe, up to an hour", () => {
    expect([0, 1, 2].map(probeDelayMs)).toEqual([60_000, 120_000, 240_000]);
    expect(probeDelayMs(50)).toBe(3_600_000);
  });
});
