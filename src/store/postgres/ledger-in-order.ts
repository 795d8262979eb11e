import { sql } from "kysely";
import { unixNow } from "../../core/ids.js";
import type { RowMove } from "../../core/ledger/batch-rules.js";
import { closed, NOT_APPLIED, refusedHold, settledAmount } from "../../core/ledger/charge-rules.js";
import { decideInOrder, type InOrderOp, type TokenRoom, type UserRoom } from "../../core/ledger/in-order.js";
import { type Executor, markUncollected } from "../ledger-statements.js";
import { type BatchRow, closeAll, insertRows, moveSums } from "./batch-statements.js";
import type { LedgerOp, OpOutcome } from "./ledger-op.js";

/**
 * The operations of a batch whose users' sums did not fit together (see ledger-batch.ts), decided
 * one after another in the order asked (core/ledger/in-order.ts) from their users' and tokens'
 * rows read under lock, then written with one statement per kind. False, with nothing changed,
 * when one of them must run by itself instead (a reference already taken, a charge whose user has
 * no row): the caller then runs them one by one.
 */
export async function runInOrder(
  trx: Executor,
  items: readonly { i: number; op: LedgerOp }[],
  outcomes: OpOutcome[],
): Promise<boolean> {
  await sql`savepoint ledger_in_order`.execute(trx);
  let decided: OpOutcome[] | null;
  try {
    decided = await tryInOrder(trx, items);
  } catch {
    decided = null;
  }
  if (!decided) {
    await sql`rollback to savepoint ledger_in_order`.execute(trx);
    return false;
  }
  for (const [k, item] of items.entries()) outcomes[item.i] = decided[k] as OpOutcome;
  return true;
}

async function tryInOrder(trx: Executor, items: readonly { op: LedgerOp }[]): Promise<OpOutcome[] | null> {
  const now = unixNow();
  const found = await closeAll(trx, items, now);
  const ops: InOrderOp[] = items.map(({ op }) => {
    if (op.kind === "hold") {
      const { row, take } = op.opening;
      return { kind: "hold", userId: row.userId, tokenId: row.tokenId, amount: take?.amount ?? 0 };
    }
    const charge = found.get(op.reference);
    if (!charge) return { kind: "not-open" };
    return op.kind === "refund" ? { kind: "refund", charge } : { kind: "settle", charge, actual: op.actual };
  });
  const { users, tokens } = await lockRows(trx, ops);
  for (const charge of found.values()) if (!users.has(charge.userId)) return null;
  const before = {
    users: new Map([...users].map(([id, u]) => [id, u.quota])),
    tokens: new Map([...tokens].map(([id, t]) => [id, t.used])),
  };
  const decided = decideInOrder(ops, users, tokens);

  const rows: BatchRow[] = [];
  const holds: Extract<LedgerOp, { kind: "hold" }>[] = [];
  const uncollected: { reference: string; uncollected: number; settled: number }[] = [];
  const outcomes = items.map(({ op }, k): OpOutcome => {
    const d = decided[k];
    if (!d || d.kind === "not-open") return { ok: true, value: NOT_APPLIED };
    if (op.kind === "hold") {
      if (d.kind === "hold" && d.refusedBy) return { ok: false, error: refusedHold(d.refusedBy) };
      rows.push({ row: op.opening.row, reference: op.reference, note: op.meta.note });
      holds.push(op);
      return { ok: true, value: undefined };
    }
    if (d.kind !== "closing") return { ok: true, value: NOT_APPLIED };
    rows.push({ row: d.row, reference: op.reference, note: op.note });
    if (d.uncollected > 0 && op.kind === "settle") {
      uncollected.push({
        reference: op.reference,
        uncollected: d.uncollected,
        settled: settledAmount(op.actual, d.uncollected),
      });
    }
    return { ok: true, value: closed(d.row, d.uncollected) };
  });

  const opened = await insertRows(trx, rows, holds, now);
  if (holds.some((h) => !opened.has(h.reference))) return null;
  // What each row moved, as a give-back (negative: a take); nothing here is conditional any more.
  const userMoves: RowMove[] = [];
  for (const [id, u] of users) {
    const give = u.quota - (before.users.get(id) ?? u.quota);
    if (give !== 0) userMoves.push({ id, take: 0, give });
  }
  const tokenMoves: RowMove[] = [];
  for (const [id, t] of tokens) {
    const give = (before.tokens.get(id) ?? t.used) - t.used;
    if (give !== 0) tokenMoves.push({ id, take: 0, give });
  }
  await moveSums(trx, userMoves, tokenMoves, now);
  for (const u of uncollected) await markUncollected(trx, u.reference, u.uncollected, u.settled);
  return outcomes;
}

/** The rows the operations move, read and locked (in id order). */
async function lockRows(trx: Executor, ops: InOrderOp[]) {
  const userIds = new Set<number>();
  const tokenIds = new Set<number>();
  for (const op of ops) {
    const who = op.kind === "hold" ? op : op.kind === "not-open" ? null : op.charge;
    if (!who) continue;
    userIds.add(who.userId);
    if (who.tokenId !== null) tokenIds.add(who.tokenId);
  }
  const users = new Map<number, UserRoom>();
  const tokens = new Map<number, TokenRoom>();
  if (userIds.size > 0) {
    const rows = await trx
      .selectFrom("users")
      .select(["id", "quota", "credit_line"])
      .where("id", "in", [...userIds])
      .orderBy("id")
      .forUpdate()
      .execute();
    for (const r of rows) users.set(Number(r.id), { quota: Number(r.quota), creditLine: Number(r.credit_line) });
  }
  if (tokenIds.size > 0) {
    const rows = await trx
      .selectFrom("tokens")
      .select(["id", "quota_limit", "used_quota"])
      .where("id", "in", [...tokenIds])
      .orderBy("id")
      .forUpdate()
      .execute();
    for (const r of rows) {
      tokens.set(Number(r.id), {
        limit: r.quota_limit === null ? null : Number(r.quota_limit),
        used: Number(r.used_quota),
      });
    }
  }
  return { users, tokens };
}
