import { CompiledQuery } from "kysely";
import { unixNow } from "../../core/ids.js";
import {
  type BatchedMove,
  batchesByReference,
  type RowMove,
  rowMoves,
  usersToRunAlone,
} from "../../core/ledger/batch-rules.js";
import {
  closed,
  NOT_APPLIED,
  type OpenCharge,
  refundRow,
  settlementPlan,
  settleRow,
} from "../../core/ledger/charge-rules.js";
import type { Executor } from "../ledger-statements.js";
import { type BatchRow, closeAll, writeBatch } from "./batch-statements.js";
import { runInOrder } from "./ledger-in-order.js";
import { type LedgerOp, type OpOutcome, type OpResult, runAlone } from "./ledger-op.js";

/** A statement of fixed text and no parameters. */
const run = (trx: Executor, text: string) => trx.executeQuery(CompiledQuery.raw(text));

interface Item {
  i: number;
  op: LedgerOp;
  reference: string;
}

/**
 * Thrown by a bare run (see runBatch) whose batch did not go through together: the transaction is
 * rolled back and the batch runs again guarded.
 */
export class GuardedRunNeeded extends Error {
  constructor() {
    super("the ledger batch did not go through together; it runs again guarded");
  }
}

/**
 * Runs `ops` (in the order asked) inside the open transaction `trx`: each batch of them (see
 * core/ledger/batch-rules.ts) with one statement per kind, the operations of a user whose sums do
 * not fit one by one, each inside a savepoint so that a refused one changes nothing. The outcome
 * of each is the one it would have had alone.
 *
 * `guarded: false` is the bare run, the common case: each batch's statements run without a
 * savepoint around them (one round trip fewer per batch), and a batch that does not go through
 * together (a refusal, a user whose sums do not fit, a statement the database refuses) throws
 * GuardedRunNeeded, so that the whole transaction is rolled back and run again guarded.
 */
export async function runBatch(trx: Executor, ops: readonly LedgerOp[], guarded = true): Promise<OpOutcome[]> {
  const outcomes: OpOutcome[] = new Array(ops.length);
  const items = ops.map((op, i) => ({ i, op, reference: op.reference }));
  for (const part of batchesByReference(items)) {
    if (guarded) await runPart(trx, part, outcomes);
    else await runPartBare(trx, part, outcomes);
  }
  return outcomes;
}

async function runPartBare(trx: Executor, part: Item[], outcomes: OpOutcome[]): Promise<void> {
  let tried: Tried;
  try {
    tried = await tryTogether(trx, part);
  } catch {
    throw new GuardedRunNeeded();
  }
  if (tried.alone.size > 0) throw new GuardedRunNeeded();
  for (const [k, item] of part.entries()) outcomes[item.i] = { ok: true, value: tried.results[k] };
}

async function runPart(trx: Executor, part: Item[], outcomes: OpOutcome[]): Promise<void> {
  let together = part;
  const alone = new Set<number>();
  while (together.length > 0) {
    await run(trx, "savepoint ledger_batch");
    let tried: Tried | null;
    try {
      tried = await tryTogether(trx, together);
    } catch {
      // A statement refused by the database itself (a missing user's row, say): every operation
      // of the batch runs alone, where it meets the same refusal by itself.
      tried = null;
    }
    if (tried && tried.alone.size === 0) {
      // The savepoint is left open: the commit releases it.
      for (const [k, item] of together.entries()) outcomes[item.i] = { ok: true, value: tried.results[k] };
      break;
    }
    await run(trx, "rollback to savepoint ledger_batch");
    if (!tried) break;
    for (const u of tried.alone) alone.add(u);
    const users = tried.users;
    together = together.filter((item) => {
      const user = item.op.kind === "hold" ? item.op.opening.row.userId : users.get(item.reference);
      return user === undefined || !alone.has(user);
    });
  }
  const rest = part.filter((item) => outcomes[item.i] === undefined);
  if (rest.length > 1 && (await runInOrder(trx, rest, outcomes))) return;
  for (const item of rest) {
    await run(trx, "savepoint ledger_one");
    try {
      outcomes[item.i] = { ok: true, value: await runAlone(trx, item.op) };
    } catch (error) {
      await run(trx, "rollback to savepoint ledger_one");
      outcomes[item.i] = { ok: false, error };
    }
  }
}

interface Tried {
  /** The result of each operation, when `alone` is empty. */
  results: OpResult[];
  /** Users whose operations must run one by one. */
  alone: Set<number>;
  /** The user of each closing that found its charge open. */
  users: Map<string, number>;
}

/** A batch's writes as one statement would make them, given the charges its closings found open. */
export interface TogetherPlan {
  write: { rows: BatchRow[]; holds: Extract<LedgerOp, { kind: "hold" }>[]; users: RowMove[]; tokens: RowMove[] };
  moves: BatchedMove[];
  /** The result of each operation, should the batch go through together. */
  results: OpResult[];
  /** The user of each closing that found its charge open. */
  users: Map<string, number>;
}

export function planTogether(items: readonly { op: LedgerOp }[], found: Map<string, OpenCharge>): TogetherPlan {
  const users = new Map<string, number>();
  for (const [reference, charge] of found) users.set(reference, charge.userId);
  const moves: BatchedMove[] = [];
  const rows: BatchRow[] = [];
  const results: OpResult[] = [];
  const holds: Extract<LedgerOp, { kind: "hold" }>[] = [];
  for (const { op } of items) {
    if (op.kind === "hold") {
      const { row } = op.opening;
      // Fields named one by one: a spread of the row took about 2 µs per hold (V8's slow path
      // for copying an object of that shape), half of this function's time.
      moves.push({
        reference: row.reference,
        userId: row.userId,
        tokenId: row.tokenId,
        take: op.opening.take?.amount ?? 0,
        give: 0,
      });
      rows.push({ row, reference: op.reference, note: op.meta.note });
      holds.push(op);
      results.push(undefined);
      continue;
    }
    const charge = found.get(op.reference);
    if (!charge) {
      results.push(NOT_APPLIED);
      continue;
    }
    const closing = closingOf(op, charge);
    moves.push({
      reference: op.reference,
      userId: charge.userId,
      tokenId: charge.tokenId,
      take: closing.move.take,
      give: closing.move.give,
    });
    rows.push({ row: closing.row, reference: op.reference, note: op.note });
    results.push(closed(closing.row));
  }
  return { write: { rows, holds, ...rowMoves(moves) }, moves, results, users };
}

async function tryTogether(trx: Executor, items: Item[]): Promise<Tried> {
  const now = unixNow();
  const plan = planTogether(items, await closeAll(trx, items, now));
  const { opened, moved } = await writeBatch(trx, plan.write, now);
  const alone = usersToRunAlone(plan.moves, moved);
  for (const hold of plan.write.holds) if (!opened.has(hold.reference)) alone.add(hold.opening.row.userId);
  return { results: plan.results, alone, users: plan.users };
}

/** A closing whose charge was open: its ledger row, and the take (an excess) or give-back. */
function closingOf(op: Exclude<LedgerOp, { kind: "hold" }>, charge: OpenCharge) {
  if (op.kind === "refund") {
    const row = refundRow(charge);
    return { row, move: { take: 0, give: row.amount } };
  }
  const plan = settlementPlan(charge, op.actual);
  if (plan.within) {
    const row = settleRow(charge, plan);
    return { row, move: { take: 0, give: row.amount } };
  }
  // Taken in full when the batch's sum fits; otherwise the user's operations run alone.
  return { row: settleRow(charge, plan, plan.excess), move: { take: plan.excess, give: 0 } };
}
