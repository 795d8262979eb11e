import {
  type ChargeOpening,
  type ClosingOutcome,
  closed,
  NOT_APPLIED,
  refundRow,
  refusedHold,
  settledAmount,
  settlementPlan,
  settleRow,
} from "../core/ledger/charge-rules.js";
import {
  closeOpenCharge,
  collectExcessIn,
  type Executor,
  insertOpening,
  markUncollected,
  takeToken,
  takeUser,
  writeClosing,
} from "./ledger-statements.js";

// One hold, refund or settlement on the query builder, statement by statement, inside a
// transaction the caller holds: what the ledger runs inside larger transactions, and what the
// PostgreSQL group commit runs for an operation that must run alone.

/** What a hold writes besides its ledger row. */
export interface OpeningMeta {
  note: string;
  closeBy: number;
  instance: string;
}

/** Takes the hold (conditionally) and opens the charge; throws when the take is refused. */
export async function holdStep(trx: Executor, opening: ChargeOpening, meta: OpeningMeta): Promise<void> {
  const { take } = opening;
  if (take) {
    if (!(await takeUser(trx, take.userId, take.amount))) throw refusedHold("user");
    if (take.tokenId !== null && !(await takeToken(trx, take.tokenId, take.amount))) throw refusedHold("token");
  }
  await insertOpening(trx, opening, meta);
}

/** Gives back everything an open charge holds and closes it as refunded, at most once. */
export async function refundStep(trx: Executor, reference: string, note: string): Promise<ClosingOutcome> {
  const charge = await closeOpenCharge(trx, reference, "refunded", null, note);
  if (!charge) return NOT_APPLIED;
  const row = refundRow(charge);
  await writeClosing(trx, row, reference, note, true);
  return closed(row);
}

/** Settles an open charge to `actual` and closes it, at most once (see Ledger.settleIn). */
export async function settleStep(
  trx: Executor,
  reference: string,
  actual: number,
  note: string,
  lockRows: boolean,
): Promise<ClosingOutcome> {
  const charge = await closeOpenCharge(trx, reference, "settled", actual, note);
  if (!charge) return NOT_APPLIED;
  const plan = settlementPlan(charge, actual);
  if (plan.within) {
    const row = settleRow(charge, plan);
    await writeClosing(trx, row, reference, note, true);
    return closed(row);
  }
  const { collected, uncollected } = await collectExcessIn(trx, charge, plan.excess, lockRows);
  const row = settleRow(charge, plan, collected);
  await writeClosing(trx, row, reference, note, false);
  if (uncollected > 0) await markUncollected(trx, reference, uncollected, settledAmount(actual, uncollected));
  return closed(row, uncollected);
}
