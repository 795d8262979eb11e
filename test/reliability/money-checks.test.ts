import { describe, expect, it } from "vitest";
import {
  allowedAmounts,
  type ClientCall,
  closureFigures,
  creditLineFigures,
  idempotencyFigures,
  type RunPrices,
  recomputeSpend,
  usageQuota,
} from "../../scripts/reliability/money-checks.js";
import type { UsageRecord } from "../../src/simulator/server.js";

const PRICES: RunPrices = {
  quotaPerUnit: 500_000,
  perCall: { "audioa:MUSIC": 0.1, "image-model": 0.039 },
  tokens: { flash: { input: 0.3, output: 2.5, cachedRatio: 0.1 } },
};

const record = (prompt: string, fields: Partial<UsageRecord>): UsageRecord => ({
  protocol: "gemini",
  model: "flash",
  prompt,
  at: 0,
  usage: [],
  images: 0,
  task: null,
  complete: true,
  ...fields,
});

const usage = (candidates: number) => ({ promptTokenCount: 100, candidatesTokenCount: candidates });

describe("the run's recomputation of each user's spend", () => {
  it("prices usage at input, cached and output rates times the ratios, rounded up", () => {
    // 100 fresh input at 0.3 + 40 output at 2.5 = 0.00013 units; x 500,000 x 1.5 = 97.5 -> 98
    expect(usageQuota(PRICES, "flash", usage(40), 1.5)).toBe(98);
    // 20 of the 100 prompt tokens cached at a tenth of the input price
    expect(usageQuota(PRICES, "flash", { ...usage(40), cachedContentTokenCount: 20 }, 1)).toBe(63);
  });

  it("allows an answered call one amount, a killed one 0 or any usage the simulator had written", () => {
    const written = [record("#s1# x", { usage: [usage(10), usage(20), usage(30)], complete: false })];
    const answered: ClientCall = {
      tag: "s1",
      userId: 1,
      kind: "content",
      priceName: "flash",
      ratio: 1,
      answered: true,
    };
    expect(allowedAmounts(answered, written, PRICES)).toEqual([53]);
    expect(allowedAmounts({ ...answered, answered: false }, written, PRICES)).toEqual([0, 28, 40, 53]);
    const image: ClientCall = {
      tag: "i1",
      userId: 1,
      kind: "image",
      priceName: "image-model",
      ratio: 1,
      answered: false,
    };
    const images = [record("#i1# y", { protocol: "openai-images", images: 3 })];
    expect(allowedAmounts(image, images, PRICES)).toEqual([0, 58_500]);
    expect(allowedAmounts({ ...image, answered: true, images: 2 }, images, PRICES)).toEqual([39_000]);
    const task: ClientCall = {
      tag: "t1",
      userId: 1,
      kind: "task",
      priceName: "audioa:MUSIC",
      ratio: 1,
      answered: true,
    };
    const failed = [record("#t1# z", { protocol: "task-relay", task: { id: "a", ends: "failure" } })];
    expect(allowedAmounts(task, failed, PRICES)).toEqual([0]);
    // A task answered to its client that the simulator never accepted (refused after the answer,
    // or its send lost) is refunded: it may cost nothing else.
    expect(allowedAmounts(task, [], PRICES)).toEqual([0]);
  });

  it("matches a spend that is one of the allowed sums and flags one that is not", () => {
    const calls: ClientCall[] = [
      { tag: "s1", userId: 7, kind: "content", priceName: "flash", ratio: 1, answered: true },
      { tag: "s2", userId: 7, kind: "content", priceName: "flash", ratio: 1, answered: false },
    ];
    const records = [
      record("#s1# a", { usage: [usage(40)] }),
      record("#s2# b", { usage: [usage(10), usage(20)], complete: false }),
    ];
    const check = (spent: number) => recomputeSpend(calls, records, PRICES, new Map([[7, spent]]))[0];
    expect(check(65)?.matches).toBe(true); // answered 65, killed call refunded
    expect(check(65 + 28)?.matches).toBe(true); // killed call settled to its first chunk's usage
    expect(check(65 + 30)?.matches).toBe(false); // no usage the simulator wrote costs 30
    expect(check(64)).toMatchObject({ matches: false, low: 65, high: 65 + 40, open: 1 });
  });
});

describe("the run's store checks", () => {
  const kill = { instance: "gateway-2", killedAt: 1000, restartedAt: 3000 };

  it("finds a charge a killed instance left open, and one closed later than the bound", () => {
    const rows = [
      { reference: "content:a", instance: "gateway-2", state: "settled", created_at: 900, closed_at: 3100 },
      { reference: "image:b", instance: "gateway-2", state: "open", created_at: 950, closed_at: null },
      { reference: "content:c", instance: "gateway-2", state: "refunded", created_at: 800, closed_at: 40_000 },
      { reference: "content:d", instance: "gateway-1", state: "open", created_at: 950, closed_at: null },
      { reference: "content:e", instance: "gateway-2", state: "settled", created_at: 500, closed_at: 700 },
    ];
    const figures = closureFigures(rows, [kill], 20_000);
    expect(figures).toMatchObject({ leftOpen: 3, closed: 2, slowestMs: 37_000, stillOpen: 2 });
    expect(figures.violations).toEqual([
      "image:b (left open by the kill of gateway-2) is still open",
      "content:c closed 37000 ms after gateway-2 restarted (bound 20000 ms; opened 200 ms before the kill, restarted 2000 ms after it)",
      "content:d is still open",
    ]);
    expect(closureFigures(rows.slice(0, 1), [kill], 20_000).violations).toEqual([]);
  });

  it("finds a balance below minus its credit line", () => {
    const users = [
      { id: 1, quota: -4_000, credit_line: 5_000 },
      { id: 2, quota: -5_001, credit_line: 5_000 },
      { id: 3, quota: 10, credit_line: 0 },
    ];
    expect(creditLineFigures(users)).toEqual({
      below: 1,
      inDebt: 2,
      violations: ["user 2: balance -5001 is below minus its credit line 5000"],
    });
  });

  it("finds an Idempotency-Key whose attempts kept two charges", () => {
    const figures = idempotencyFigures([
      {
        key: "k1",
        attempts: 2,
        charges: [
          { reference: "image:r1", state: "refunded", amount: 100 },
          { reference: "image:r1/2", state: "settled", amount: 100 },
        ],
      },
      {
        key: "k2",
        attempts: 2,
        charges: [
          { reference: "image:r2", state: "settled", amount: 100 },
          { reference: "image:r2/2", state: "settled", amount: 100 },
        ],
      },
    ]);
    expect(figures).toMatchObject({ keys: 2, retakenKeys: 2 });
    expect(figures.violations).toEqual(["Idempotency-Key k2 charged 2 times (image:r2, image:r2/2)"]);
  });
});
