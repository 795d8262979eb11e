import { type Kysely, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import {
  type ChargeOpening,
  type ClosingRow,
  excessAfterShortTry,
  excessTakenAtOnce,
  type LedgerRow,
  type OpenCharge,
} from "../core/ledger/charge-rules.js";
import { boundGuard, tokenTakeFits, userTakeFits } from "./ledger-guards.js";
import type { Database } from "./schema.js";

/** A connection or an open transaction: where a ledger statement runs. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** The `ledger` row of a move of quota (a hold's charge, a closing, a top-up). */
export function ledgerValues(row: ClosingRow | LedgerRow, reference: string, note: string, now: number) {
  return {
    user_id: row.userId,
    token_id: row.tokenId,
    kind: row.kind,
    amount: row.amount,
    reference,
    note,
    created_at: now,
  };
}

/** The `charges` row a hold opens. */
export function openChargeValues(opening: ChargeOpening, meta: { closeBy: number; instance: string }, now: number) {
  return {
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
  };
}

// The statements of the ledger's in-transaction form, shared by both engines: the operations inside
// a larger transaction (a task's submit and state moves), a top-up, and what PostgreSQL's group
// commit runs for an operation that must run alone. Each hold and each give-back is one statement
// on the balance row; the takes' conditions are those of ledger-guards.ts.

/** One conditional statement: takes `amount` unless the balance would pass minus the credit line. */
export async function takeUser(trx: Executor, userId: number, amount: number): Promise<boolean> {
  const res = await trx
    .updateTable("users")
    .set({ quota: sql`quota - ${amount}`, used_quota: sql`used_quota + ${amount}`, updated_at: unixNow() })
    .where("id", "=", userId)
    .where(boundGuard(userTakeFits, amount))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** One conditional statement: counts `amount` against the token unless its limit would pass. */
export async function takeToken(trx: Executor, tokenId: number, amount: number): Promise<boolean> {
  const res = await trx
    .updateTable("tokens")
    .set({ used_quota: sql`used_quota + ${amount}`, updated_at: unixNow() })
    .where("id", "=", tokenId)
    .where(boundGuard(tokenTakeFits, amount))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Open -> `state`, once (compare-and-set; on PostgreSQL a second closer waits for the first's
 * commit and then finds the charge closed). The charge as it was, or null when it was not open.
 */
export async function closeOpenCharge(
  trx: Executor,
  reference: string,
  state: "settled" | "refunded",
  settled: number | null,
  reason: string,
): Promise<OpenCharge | null> {
  const row = await trx
    .updateTable("charges")
    .set({ state, settled, close_reason: reason.slice(0, 200), closed_at: unixNow() })
    .where("reference", "=", reference)
    .where("state", "=", "open")
    .returning(["user_id", "token_id", "held"])
    .executeTakeFirst();
  if (!row) return null;
  return {
    userId: Number(row.user_id),
    tokenId: row.token_id === null ? null : Number(row.token_id),
    held: Number(row.held),
  };
}

/** Appends a closing row and, for a give-back, moves the balance by its amount. */
export async function writeClosing(trx: Executor, row: ClosingRow, reference: string, note: string, move: boolean) {
  await trx
    .insertInto("ledger")
    .values(ledgerValues(row, reference, note, unixNow()))
    .onConflict((oc) => oc.columns(["reference", "kind"]).doNothing())
    .execute();
  if (move && row.amount !== 0) await moveBalance(trx, row.userId, row.tokenId, row.amount);
}

async function moveBalance(trx: Executor, userId: number, tokenId: number | null, amount: number) {
  if (amount === 0) return;
  const now = unixNow();
  await trx
    .updateTable("users")
    .set({ quota: sql`quota + ${amount}`, used_quota: sql`used_quota - ${amount}`, updated_at: now })
    .where("id", "=", userId)
    .execute();
  if (tokenId !== null) {
    await trx
      .updateTable("tokens")
      .set({ used_quota: sql`used_quota - ${amount}`, updated_at: now })
      .where("id", "=", tokenId)
      .execute();
  }
}

/**
 * Takes an excess above the hold: one conditional statement per row when the room is there
 * (the usual case); else as much as the credit line and the token's limit leave, from the rows
 * read under their locks.
 */
export async function collectExcessIn(trx: Executor, charge: OpenCharge, excess: number, lockRows: boolean) {
  const userTaken = await takeUser(trx, charge.userId, excess);
  const tokenTaken = userTaken && (charge.tokenId === null || (await takeToken(trx, charge.tokenId, excess)));
  if (excessTakenAtOnce({ userTaken, tokenTaken })) return { collected: excess, uncollected: 0 };
  let users = trx.selectFrom("users").select(["quota", "credit_line"]).where("id", "=", charge.userId);
  if (lockRows) users = users.forUpdate();
  const user = await users.executeTakeFirstOrThrow();
  let token: { quota_limit: number | null; used_quota: number } | undefined;
  if (charge.tokenId !== null) {
    let tokens = trx.selectFrom("tokens").select(["quota_limit", "used_quota"]).where("id", "=", charge.tokenId);
    if (lockRows) tokens = tokens.forUpdate();
    token = await tokens.executeTakeFirst();
  }
  const outcome = excessAfterShortTry(excess, userTaken, {
    quota: Number(user.quota),
    creditLine: Number(user.credit_line),
    tokenRemaining:
      token === undefined || token.quota_limit === null ? null : Number(token.quota_limit) - Number(token.used_quota),
  });
  const now = unixNow();
  await trx
    .updateTable("users")
    .set({
      quota: sql`quota + ${outcome.userMove}`,
      used_quota: sql`used_quota - ${outcome.userMove}`,
      updated_at: now,
    })
    .where("id", "=", charge.userId)
    .execute();
  if (charge.tokenId !== null) {
    await trx
      .updateTable("tokens")
      .set({ used_quota: sql`used_quota - ${outcome.tokenMove}`, updated_at: now })
      .where("id", "=", charge.tokenId)
      .execute();
  }
  return outcome;
}

/** Writes a hold's charge row and opens its lifecycle row (the take is done already). */
export async function insertOpening(
  trx: Executor,
  opening: ChargeOpening,
  meta: { note: string; closeBy: number; instance: string },
): Promise<void> {
  const now = unixNow();
  await trx
    .insertInto("ledger")
    .values(ledgerValues(opening.row, opening.row.reference, meta.note, now))
    .execute();
  await trx
    .insertInto("charges")
    .values(openChargeValues(opening, meta, now))
    .execute();
}

/** Records on a settled charge what could not be collected, and the amount really settled. */
export async function markUncollected(trx: Executor, reference: string, uncollected: number, settled: number) {
  await trx.updateTable("charges").set({ uncollected, settled }).where("reference", "=", reference).execute();
}

/** Records the usage seen on an open charge and keeps it open until `closeBy`. */
export async function noteSeenUsage(db: Executor, reference: string, seen: number, closeBy: number) {
  await db
    .updateTable("charges")
    .set({ seen, close_by: closeBy })
    .where("reference", "=", reference)
    .where("state", "=", "open")
    .execute();
}

/** Writes a top-up row and credits the user, once per reference: false when it was there already. */
export async function insertTopUp(trx: Executor, row: LedgerRow, note: string): Promise<boolean> {
  const inserted = await trx
    .insertInto("ledger")
    .values(ledgerValues(row, row.reference, note, unixNow()))
    .onConflict((oc) => oc.columns(["reference", "kind"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  if (inserted === undefined) return false;
  await trx
    .updateTable("users")
    .set({ quota: sql`quota + ${row.amount}`, updated_at: unixNow() })
    .where("id", "=", row.userId)
    .execute();
  return true;
}

/** A user's ledger rows, newest first, a page at a time. */
export function ledgerEntries(db: Executor, userId: number, options: { limit: number; beforeId?: number }) {
  let q = db.selectFrom("ledger").selectAll().where("user_id", "=", userId);
  if (options.beforeId !== undefined) q = q.where("id", "<", options.beforeId);
  return q.orderBy("id", "desc").limit(options.limit).execute();
}

/** Sum of all ledger rows of a user. */
export async function ledgerSumOf(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom("ledger")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("amount"), sql<number>`0`).as("total"))
    .where("user_id", "=", userId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
