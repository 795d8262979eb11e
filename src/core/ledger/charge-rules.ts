/**
 * The money rules of one charge, as plain data: what a hold, a settlement and a refund may do and
 * which ledger row each writes. Both store paths (the query builder on PostgreSQL, the prepared
 * statements on SQLite) run these and only execute what they decide.
 *
 * A charge is open from its hold until it is settled or refunded; each close happens once (a
 * compare-and-set on the charge's state) and writes one ledger row. A balance never goes below
 * minus the user's credit line: the hold is conditional on it, and a settlement above the hold
 * collects the excess only as far as the line (and the token's limit) allows.
 */

export type ChargeState = "open" | "settled" | "refunded";

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
