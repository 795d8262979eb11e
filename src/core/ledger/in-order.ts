/**
 * The operations of one user asked for in one turn whose sums do not fit together (a hot user at
 * its credit line), decided one after another in the order asked from the rows as read under
 * their locks: the outcome of each is the one it would have had alone, in that order, and the
 * store then writes all of them with one statement per kind.
 */

import {
  type ClosingRow,
  collectExcess,
  type OpenCharge,
  refundRow,
  settlementPlan,
  settleRow,
  tokenAllows,
  userAllows,
} from "./charge-rules.js";

/** A balance row as read: what it holds and how far below zero it may go. */
export interface UserRoom {
  quota: number;
  creditLine: number;
}

/** A token row as read: its limit (null: none) and what it has used. */
export interface TokenRoom {
  limit: number | null;
  used: number;
}

export type InOrderOp =
  | { kind: "hold"; userId: number; tokenId: number | null; amount: number }
  | { kind: "refund"; charge: OpenCharge }
  | { kind: "settle"; charge: OpenCharge; actual: number }
  /** A closing whose charge was not open: nothing happens. */
  | { kind: "not-open" };

export type InOrderOutcome =
  | { kind: "hold"; refusedBy: "user" | "token" | null }
  | { kind: "closing"; row: ClosingRow; uncollected: number }
  | { kind: "not-open" };

/**
 * Decides `ops` one after another against `users` and `tokens` (changed in place as each move is
 * made). A hold takes from the balance down to minus the credit line, then from the token within
 * its limit, or is refused by the first that has no room (a missing row has none). A closing
 * gives back within its hold, or collects its excess as far as the rows allow (a missing token
 * limits nothing). Every user a closing moves must be in `users`.
 */
export function decideInOrder(
  ops: readonly InOrderOp[],
  users: Map<number, UserRoom>,
  tokens: Map<number, TokenRoom>,
): InOrderOutcome[] {
  const move = (userId: number, tokenId: number | null, amount: number) => {
    const user = users.get(userId);
    if (user) user.quota += amount;
    const token = tokenId === null ? undefined : tokens.get(tokenId);
    if (token) token.used -= amount;
  };
  return ops.map((op): InOrderOutcome => {
    if (op.kind === "not-open") return op;
    if (op.kind === "hold") {
      if (op.amount === 0) return { kind: "hold", refusedBy: null };
      const user = users.get(op.userId);
      if (!user || !userAllows(user.quota, user.creditLine, op.amount)) return { kind: "hold", refusedBy: "user" };
      const token = op.tokenId === null ? null : tokens.get(op.tokenId);
      if (token === undefined || (token !== null && !tokenAllows(token.limit, token.used, op.amount))) {
        return { kind: "hold", refusedBy: "token" };
      }
      move(op.userId, op.tokenId, -op.amount);
      return { kind: "hold", refusedBy: null };
    }
    const { charge } = op;
    if (op.kind === "refund") {
      const row = refundRow(charge);
      move(charge.userId, charge.tokenId, row.amount);
      return { kind: "closing", row, uncollected: 0 };
    }
    const plan = settlementPlan(charge, op.actual);
    if (plan.within) {
      const row = settleRow(charge, plan);
      move(charge.userId, charge.tokenId, row.amount);
      return { kind: "closing", row, uncollected: 0 };
    }
    const user = users.get(charge.userId) as UserRoom;
    const token = charge.tokenId === null ? undefined : tokens.get(charge.tokenId);
    const { collected, uncollected } = collectExcess(plan.excess, {
      quota: user.quota,
      creditLine: user.creditLine,
      tokenRemaining: token === undefined || token.limit === null ? null : token.limit - token.used,
    });
    move(charge.userId, charge.tokenId, -collected);
    return { kind: "closing", row: settleRow(charge, plan, collected), uncollected };
  });
}
