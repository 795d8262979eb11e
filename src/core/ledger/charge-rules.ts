/**
 * The money rules of one charge, as plain data: what a hold, a settlement, a refund and a top-up
 * may do and which ledger row each writes. Both store paths (the query builder on PostgreSQL, the
 * prepared statements on SQLite) run these and only execute what they decide; a writer that
 * batches many operations into one transaction would run the same functions per operation.
 *
 * A charge is open from its hold until it is settled or refunded; each close happens once (a
 * compare-and-set on the charge's state) and writes one ledger row. A balance never goes below
 * minus the user's credit line: the hold is conditional on it, and a settlement above the hold
 * collects the excess only as far as the line (and the token's limit) allows.
 */

import { GatewayError } from "../errors.js";

export type ChargeState = "open" | "settled" | "refunded";

/** One row of the append-only ledger, as a step of the money rules writes it. */
export interface LedgerRow {
  kind: "charge" | "refund" | "settle" | "topup";
  userId: number;
  tokenId: number | null;
  /** Signed amount added to the balance. */
  amount: number;
  reference: string;
}

/** What a closing needs to know of an open charge (read by the compare-and-set that closes it). */
export interface OpenCharge {
  userId: number;
  tokenId: number | null;
  held: number;
}

/** The ledger row a closing writes, and the balance move that goes with it. */
export interface ClosingRow {
  kind: "settle" | "refund";
  userId: number;
  tokenId: number | null;
  /** Signed amount added to the balance (and to the ledger). */
  amount: number;
}

/** An amount that may be written to the ledger: a non-negative safe integer. */
export function assertLedgerAmount(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw new RangeError(`${what} must be a non-negative safe integer, got ${amount}`);
  }
}

/** What opening a charge (a hold) does, for the store to carry out in one transaction. */
export interface ChargeOpening {
  /** The conditional take from the balance (and the token) that must succeed; null: nothing to take. */
  take: { userId: number; tokenId: number | null; amount: number } | null;
  /** The charge row of the ledger: minus the hold. */
  row: LedgerRow;
  /** The charge's lifecycle row starts open, holding the amount. */
  held: number;
}

/**
 * A hold of `amount` (a non-negative safe integer) for `reference`. A hold of zero takes nothing
 * but still opens the charge, so that its closing follows the same rules.
 */
export function openCharge(input: {
  userId: number;
  tokenId: number | null;
  amount: number;
  reference: string;
}): ChargeOpening {
  assertLedgerAmount(input.amount, "charge amount");
  const { userId, tokenId, amount, reference } = input;
  return {
    take: amount > 0 ? { userId, tokenId, amount } : null,
    row: { kind: "charge", userId, tokenId, amount: -amount, reference },
    held: amount,
  };
}

/**
 * The error of a hold whose conditional take changed nothing: the balance would have passed minus
 * the credit line, or the token its limit. The whole opening is then rolled back.
 */
export function refusedHold(refusedBy: "user" | "token"): GatewayError {
  return new GatewayError(refusedBy === "user" ? "GW_ERR_INSUFFICIENT_QUOTA" : "GW_ERR_TOKEN_QUOTA_EXCEEDED");
}

/** An operator's top-up: a positive safe integer, written once per ledger reference. */
export function topUpRow(input: { userId: number; amount: number; reference: string }): LedgerRow {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) {
    throw new GatewayError("GW_ERR_VALIDATION", "amount must be a positive integer", { param: "amount" });
  }
  return { kind: "topup", userId: input.userId, tokenId: null, amount: input.amount, reference: input.reference };
}

/** How a settlement or refund went, as both store paths report it. */
export interface ClosingOutcome {
  /** False when the charge was not open (already closed, or never charged): nothing changed. */
  applied: boolean;
  /** Signed amount added to the balance (0 when not applied). */
  amount: number;
  /** Cost above the hold that the credit line (or the token's limit) did not allow to collect. */
  uncollected: number;
}

export const NOT_APPLIED: ClosingOutcome = { applied: false, amount: 0, uncollected: 0 };

/** The outcome of a closing (or a top-up) that wrote `row`. */
export function closed(row: { amount: number }, uncollected = 0): ClosingOutcome {
  return { applied: true, amount: row.amount, uncollected };
}

/** The refund of an open charge gives back everything it holds. */
export function refundRow(charge: OpenCharge): ClosingRow {
  return { kind: "refund", userId: charge.userId, tokenId: charge.tokenId, amount: charge.held };
}

/**
 * How a settlement to `actual` goes: within the hold, the difference is given back (one
 * unconditional move); above it, the excess must be collected, conditionally on the credit line.
 */
export type SettlementPlan = { within: true; giveBack: number } | { within: false; excess: number };

export function settlementPlan(charge: OpenCharge, actual: number): SettlementPlan {
  assertLedgerAmount(actual, "settled amount");
  return actual <= charge.held
    ? { within: true, giveBack: charge.held - actual }
    : { within: false, excess: actual - charge.held };
}

/**
 * The hold's rules: a hold takes `amount` from a user's balance only while the balance and the
 * credit line cover it, and adds it to a token's usage only while the token's limit (null: none)
 * leaves room for it. Every in-memory check of a hold uses these; the stores' conditional
 * statements are the same rules on the rows.
 */
export function userAllows(quota: number, creditLine: number, amount: number): boolean {
  return quota + creditLine >= amount;
}

export function tokenAllows(limit: number | null, used: number, amount: number): boolean {
  return limit === null || limit - used >= amount;
}

/** What a balance (and a token) can still give before the credit line (and the token's limit). */
export interface Room {
  quota: number;
  creditLine: number;
  /** null: the token has no limit (or the charge has no token). */
  tokenRemaining: number | null;
}

/**
 * The part of an excess that may be collected: no more than leaves the balance at minus the
 * credit line, nor more than the token's limit leaves. The rest is recorded as uncollected.
 */
export function collectExcess(excess: number, room: Room): { collected: number; uncollected: number } {
  const userRoom = Math.max(0, room.quota + room.creditLine);
  const tokenRoom = room.tokenRemaining === null ? Number.POSITIVE_INFINITY : Math.max(0, room.tokenRemaining);
  const collected = Math.min(excess, userRoom, tokenRoom);
  return { collected, uncollected: excess - collected };
}

/**
 * An excess is first taken as a hold is: one conditional take of all of it from the balance,
 * then from the token. When both succeed, all of it is collected and nothing else moves.
 */
export function excessTakenAtOnce(attempt: { userTaken: boolean; tokenTaken: boolean }): boolean {
  return attempt.userTaken && attempt.tokenTaken;
}

/**
 * When the first try fell short: what is collected, from the rows as read after the try (`room`,
 * whose quota still lacks the excess when the user's take succeeded), and the move (added to the
 * balance, taken off the used quota) that brings each row to it: the user's row gives back what
 * its take took beyond the part collected, or takes that part; the token's row, untouched by the
 * try, takes the part collected.
 */
export function excessAfterShortTry(
  excess: number,
  userTaken: boolean,
  room: Room,
): { collected: number; uncollected: number; userMove: number; tokenMove: number } {
  const outcome = collectExcess(excess, { ...room, quota: room.quota + (userTaken ? excess : 0) });
  return {
    ...outcome,
    userMove: userTaken ? excess - outcome.collected : -outcome.collected,
    tokenMove: -outcome.collected,
  };
}

/** What a settled charge records as settled: the cost, less what could not be collected. */
export function settledAmount(actual: number, uncollected: number): number {
  return actual - uncollected;
}

/** The settle row of a settlement: the give-back within the hold, or minus the excess collected. */
export function settleRow(charge: OpenCharge, plan: SettlementPlan, collected = 0): ClosingRow {
  return {
    kind: "settle",
    userId: charge.userId,
    tokenId: charge.tokenId,
    amount: plan.within ? plan.giveBack : -collected,
  };
}

/** How the reaper closes an overdue open charge that no task owns. */
export type ReapDecision = { close: "settle"; amount: number; reason: string } | { close: "refund"; reason: string };

/**
 * An overdue charge is settled to the usage the gateway saw (capped by nothing but the credit
 * line, as any settlement), else refunded: whoever opened it did not close it in time.
 */
export function reapDecision(charge: { seen: number | null }, why: string): ReapDecision {
  if (charge.seen !== null && charge.seen > 0) {
    return { close: "settle", amount: charge.seen, reason: `${why}; settled to the usage seen` };
  }
  return { close: "refund", reason: `${why}; no usage was seen, refunded` };
}
