import type { ChargeOpening, ClosingOutcome } from "../../core/ledger/charge-rules.js";
import type { Executor } from "../ledger-statements.js";
import { holdStep, type OpeningMeta, refundStep, settleStep } from "../ledger-steps.js";

/** A stand-alone hold, refund or settlement, as the PostgreSQL group commit queues it. */
export type LedgerOp =
  | { kind: "hold"; reference: string; opening: ChargeOpening; meta: OpeningMeta }
  | { kind: "refund"; reference: string; note: string }
  | { kind: "settle"; reference: string; actual: number; note: string };

export type OpResult = ClosingOutcome | undefined;
export type OpOutcome = { ok: true; value: OpResult } | { ok: false; error: unknown };

/** Runs one operation statement by statement, as it would run in a transaction of its own. */
export async function runAlone(trx: Executor, op: LedgerOp): Promise<OpResult> {
  if (op.kind === "hold") {
    await holdStep(trx, op.opening, op.meta);
    return undefined;
  }
  if (op.kind === "refund") return refundStep(trx, op.reference, op.note);
  return settleStep(trx, op.reference, op.actual, op.note, true);
}
