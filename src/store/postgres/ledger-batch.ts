import { sql } from "kysely";
import { unixNow } from "../../core/ids.js";
import { type BatchedMove, batchesByReference, rowMoves, usersToRunAlone } from "../../core/ledger/batch-rules.js";
import {
  type ChargeOpening,
  type ClosingOutcome,
  type ClosingRow,
  closed,
  NOT_APPLIED,
  type OpenCharge,
  refundRow,
  settlementPlan,
  settleRow,
} from "../../core/ledger/charge-rules.js";
import type { Executor } from "../ledger-statements.js";
import { holdStep, type OpeningMeta, refundStep, settleStep } from "../ledger-steps.js";

/** A stand-alone hold, refund or settlement, as the PostgreSQL group commit queues it. */
export type LedgerOp =
  | { kind: "hold"; reference: string; opening: ChargeOpening; meta: OpeningMeta }
  | { kind: "refund"; reference: string; note: string }
  | { kind: "settle"; reference: string; actual: number; note: string };

export type OpResult = ClosingOutcome | undefined;
export type OpOutcome = { ok: true; value: OpResult } | { ok: false; error: unknown };

interface Item {
  i: number;
  op: LedgerOp;
  reference: string;
}

/** Runs one operation statement by statement, as it would run in a transaction of its own. */
export async function runAlone(trx: Executor, op: LedgerOp): Promise<OpResult> {
  if (op.kind === "hold") {
    await holdStep(trx, op.opening, op.meta);
    return undefined;
  }
  if (op.kind === "refund") return refundStep(trx, op.reference, op.note);
  return settleStep(trx, op.reference, op.actual, op.note, true);
}

/**
 * Runs `ops` (in the order asked) inside the open transaction `trx`: each batch of them (see
 * core/ledger/batch-rules.ts) with one statement per kind, the operations of a user whose sums do
 * not fit one by one, each inside a savepoint so that a refused one changes nothing. The outcome
 * of each is the one it would have had alone.
 */
export async function runBatch(trx: Executor, ops: readonly LedgerOp[]): Promise<OpOutcome[]> {
  const outcomes: OpOutcome[] = new Array(ops.length);
  const items = ops.map((op, i) => ({ i, op, reference: op.reference }));
  for (const part of batchesByReference(items)) await runPart(trx, part, outcomes);
  return outcomes;
}

async function runPart(trx: Executor, part: Item[], outcomes: OpOutcome[]): Promise<void> {
  let together = part.length > 1 ? part : [];
  const alone = new Set<number>();
  while (together.length > 0) {
    await sql`savepoint ledger_batch`.execute(trx);
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
    await sql`rollback to savepoint ledger_batch`.execute(trx);
    if (!tried) break;
    for (const u of tried.alone) alone.add(u);
    const users = tried.users;
    together = together.filter((item) => {
      const user = item.op.kind === "hold" ? item.op.opening.row.userId : users.get(item.reference);
      return user === undefined || !alone.has(user);
    });
  }
  for (const item of part) {
    if (outcomes[item.i] !== undefined) continue;
    await sql`savepoint ledger_one`.execute(trx);
    try {
      outcomes[item.i] = { ok: true, value: await runAlone(trx, item.op) };
    } catch (error) {
      await sql`rollback to savepoint ledger_one`.execute(trx);
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

async function tryTogether(trx: Executor, items: Item[]): Promise<Tried> {
  const now = unixNow();
  const found = await closeAll(trx, items, now);
  const users = new Map([...found].map(([reference, charge]) => [reference, charge.userId]));
  const moves: BatchedMove[] = [];
  const rows: { row: ClosingRow | ChargeOpening["row"]; reference: string; note: string }[] = [];
  const results: OpResult[] = [];
  const holds: Extract<LedgerOp, { kind: "hold" }>[] = [];
  for (const { op } of items) {
    if (op.kind === "hold") {
      const { row } = op.opening;
      moves.push({ ...row, take: op.opening.take?.amount ?? 0, give: 0 });
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
    moves.push({ reference: op.reference, userId: charge.userId, tokenId: charge.tokenId, ...closing.move });
    rows.push({ row: closing.row, reference: op.reference, note: op.note });
    results.push(closed(closing.row));
  }
  const opened = await insertRows(trx, rows, holds, now);
  const moved = await moveRows(trx, moves, now);
  const alone = usersToRunAlone(moves, moved);
  for (const hold of holds) if (!opened.has(hold.reference)) alone.add(hold.opening.row.userId);
  return { results, alone, users };
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

/** One compare-and-set closing every charge of the batch that is open: the charges as they were. */
async function closeAll(trx: Executor, items: Item[], now: number): Promise<Map<string, OpenCharge>> {
  const values = items.flatMap(({ op }) =>
    op.kind === "hold"
      ? []
      : [
          op.kind === "refund"
            ? sql`(${op.reference}, 'refunded', null::bigint, ${op.note.slice(0, 200)})`
            : sql`(${op.reference}, 'settled', ${op.actual}::bigint, ${op.note.slice(0, 200)})`,
        ],
  );
  const found = new Map<string, OpenCharge>();
  if (values.length === 0) return found;
  const res = await sql<{ reference: string; user_id: number; token_id: number | null; held: number }>`
    update charges set state = v.state, settled = v.settled, close_reason = v.reason, closed_at = ${now}
    from (values ${sql.join(values)}) as v(reference, state, settled, reason)
    where charges.reference = v.reference and charges.state = 'open'
    returning charges.reference, charges.user_id, charges.token_id, charges.held`.execute(trx);
  for (const r of res.rows) {
    found.set(r.reference, {
      userId: Number(r.user_id),
      tokenId: r.token_id === null ? null : Number(r.token_id),
      held: Number(r.held),
    });
  }
  return found;
}

/** One insert of every ledger row, one of every opened charge: the references of those opened. */
async function insertRows(
  trx: Executor,
  rows: { row: ClosingRow | ChargeOpening["row"]; reference: string; note: string }[],
  holds: Extract<LedgerOp, { kind: "hold" }>[],
  now: number,
): Promise<Set<string>> {
  const charged = new Set<string>();
  if (rows.length > 0) {
    const inserted = await trx
      .insertInto("ledger")
      .values(
        rows.map(({ row, reference, note }) => ({
          user_id: row.userId,
          token_id: row.tokenId,
          kind: row.kind,
          amount: row.amount,
          reference,
          note,
          created_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(["reference", "kind"]).doNothing())
      .returning(["reference", "kind"])
      .execute();
    for (const r of inserted) if (r.kind === "charge") charged.add(r.reference);
  }
  const opened = new Set<string>();
  if (holds.length === 0) return opened;
  const inserted = await trx
    .insertInto("charges")
    .values(
      holds.map(({ opening, meta }) => ({
        reference: opening.row.reference,
        user_id: opening.row.userId,
        token_id: opening.row.tokenId,
        state: "open" as const,
        held: opening.held,
        seen: null,
        settled: null,
        close_by: meta.closeBy,
        instance: meta.instance,
        created_at: now,
        closed_at: null,
      })),
    )
    .onConflict((oc) => oc.column("reference").doNothing())
    .returning("reference")
    .execute();
  for (const r of inserted) if (charged.has(r.reference)) opened.add(r.reference);
  return opened;
}

/**
 * One statement moving every user's and every token's sums: the takes only where they fit (the
 * hold rule against the balance before the give-backs, the token's limit), the give-backs always.
 * The ids of the rows moved.
 */
async function moveRows(trx: Executor, moves: BatchedMove[], now: number) {
  const { users, tokens } = rowMoves(moves);
  const moved = { users: new Set<number>(), tokens: new Set<number>() };
  if (users.length === 0) return moved;
  const values = (rows: typeof users) =>
    sql.join(rows.map((r) => sql`(${r.id}::bigint, ${r.take}::bigint, ${r.give}::bigint)`));
  const tokenPart =
    tokens.length === 0
      ? sql`select null::bigint as id where false`
      : sql`update tokens set used_quota = tokens.used_quota + t.take - t.give, updated_at = ${now}
          from (values ${values(tokens)}) as t(id, take, give)
          where tokens.id = t.id
            and (t.take = 0 or tokens.quota_limit is null or tokens.quota_limit - tokens.used_quota >= t.take)
          returning tokens.id`;
  const res = await sql<{ what: string; id: number }>`
    with u as (
      update users set quota = users.quota - v.take + v.give, used_quota = users.used_quota + v.take - v.give,
        updated_at = ${now}
      from (values ${values(users)}) as v(id, take, give)
      where users.id = v.id and (v.take = 0 or users.quota + users.credit_line >= v.take)
      returning users.id
    ), t as (${tokenPart})
    select 'user' as what, id from u union all select 'token' as what, id from t`.execute(trx);
  for (const r of res.rows) (r.what === "user" ? moved.users : moved.tokens).add(Number(r.id));
  return moved;
}
