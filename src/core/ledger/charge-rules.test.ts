import { describe, expect, it } from "vitest";
import {
  assertLedgerAmount,
  collectExcess,
  excessAfterShortTry,
  excessTakenAtOnce,
  openCharge,
  reapDecision,
  refundRow,
  refusedHold,
  settledAmount,
  settlementPlan,
  settleRow,
  topUpRow,
} from "./charge-rules.js";

const charge = { userId: 7, tokenId: 3, held: 100 };

describe("charge rules", () => {
  it("refunds everything an open charge holds", () => {
    expect(refundRow(charge)).toEqual({ kind: "refund", userId: 7, tokenId: 3, amount: 100 });
  });

  it("gives back the difference of a settlement within the hold, a sale at the hold included", () => {
    const plan = settlementPlan(charge, 40);
    expect(plan).toEqual({ within: true, giveBack: 60 });
    expect(settleRow(charge, plan)).toEqual({ kind: "settle", userId: 7, tokenId: 3, amount: 60 });
    expect(settleRow(charge, settlementPlan(charge, 100)).amount).toBe(0);
  });

  it("collects an excess above the hold only down to minus the credit line and within the token's limit", () => {
    const plan = settlementPlan(charge, 250);
    expect(plan).toEqual({ within: false, excess: 150 });
    expect(collectExcess(150, { quota: 500, creditLine: 0, tokenRemaining: null })).toEqual({
      collected: 150,
      uncollected: 0,
    });
    expect(collectExcess(150, { quota: 20, creditLine: 50, tokenRemaining: null })).toEqual({
      collected: 70,
      uncollected: 80,
    });
    expect(collectExcess(150, { quota: -60, creditLine: 50, tokenRemaining: null })).toEqual({
      collected: 0,
      uncollected: 150,
    });
    expect(collectExcess(150, { quota: 500, creditLine: 0, tokenRemaining: 30 })).toEqual({
      collected: 30,
      uncollected: 120,
    });
    expect(settleRow(charge, plan, 70).amount).toBe(-70);
  });

  it("settles an overdue charge to the usage seen, else refunds it, saying why", () => {
    expect(reapDecision({ seen: 30 }, "late")).toEqual({
      close: "settle",
      amount: 30,
      reason: "late; settled to the usage seen",
    });
    expect(reapDecision({ seen: null }, "late")).toMatchObject({ close: "refund" });
    expect(reapDecision({ seen: 0 }, "late")).toMatchObject({ close: "refund" });
  });

  it("refuses amounts that are not non-negative safe integers", () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53, 1e300]) {
      expect(() => assertLedgerAmount(bad, "x")).toThrow(RangeError);
    }
    expect(() => settlementPlan(charge, 2 ** 53)).toThrow(RangeError);
    expect(() => assertLedgerAmount(Number.MAX_SAFE_INTEGER, "x")).not.toThrow();
  });
});

describe("opening and top-up rules", () => {
  it("opens a hold as a conditional take and a charge row of minus the amount; a zero hold takes nothing", () => {
    const opening = openCharge({ userId: 7, tokenId: 3, amount: 100, reference: "task:a" });
    expect(opening).toEqual({
      take: { userId: 7, tokenId: 3, amount: 100 },
      row: { kind: "charge", userId: 7, tokenId: 3, amount: -100, reference: "task:a" },
      held: 100,
    });
    expect(openCharge({ userId: 7, tokenId: null, amount: 0, reference: "r" }).take).toBeNull();
    expect(() => openCharge({ userId: 7, tokenId: null, amount: -1, reference: "r" })).toThrow(RangeError);
  });

  it("refuses a hold the balance or the token cannot cover with the error of the one that refused", () => {
    expect(refusedHold("user").errorName).toBe("GW_ERR_INSUFFICIENT_QUOTA");
    expect(refusedHold("token").errorName).toBe("GW_ERR_TOKEN_QUOTA_EXCEEDED");
  });

  it("tops up by a positive integer only", () => {
    expect(topUpRow({ userId: 2, amount: 50, reference: "user:2:inv-1" })).toEqual({
      kind: "topup",
      userId: 2,
      tokenId: null,
      amount: 50,
      reference: "user:2:inv-1",
    });
    for (const bad of [0, -5, 1.5]) expect(() => topUpRow({ userId: 2, amount: bad, reference: "x" })).toThrow();
  });

  it("corrects a short try at an excess: gives back what the user's take took beyond what may be collected", () => {
    // The user's take of 150 succeeded (quota read after it: 20 - 150), the token's did not.
    expect(excessAfterShortTry(150, true, { quota: -130, creditLine: 0, tokenRemaining: 30 })).toEqual({
      collected: 20,
      uncollected: 130,
      userMove: 130,
      tokenMove: -20,
    });
    // The user's take failed: the part the credit line leaves is taken.
    expect(excessAfterShortTry(150, false, { quota: 20, creditLine: 50, tokenRemaining: null })).toEqual({
      collected: 70,
      uncollected: 80,
      userMove: -70,
      tokenMove: -70,
    });
    expect(excessTakenAtOnce({ userTaken: true, tokenTaken: true })).toBe(true);
    expect(settledAmount(250, 80)).toBe(170);
  });
});
