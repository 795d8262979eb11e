import { type Kysely, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import { type ClosingRow, collectExcess, type OpenCharge } from "../core/ledger/charge-rules.js";
import type { Database } from "./schema.js";

/** A connection or an open transaction: where a ledger statement runs. */
export type Executor = Kysely<Database> | Transaction<Database>;

// The statements of the ledger's query-builder path (PostgreSQL, and SQLite inside larger
// transactions). Each hold and each give-back is one statement on the balance row.

/** One conditional statement: takes `amount` unless the balance would pass minus the credit line. */
export async function takeUser(trx: Executor, userId: number, amount: number): Promise<boolean> {
  const res = await trx
    .updateTable("users")
    .set({ quota: sql`quota - ${amount}`, used_quota: sql`used_quota + ${amount}`, updated_at: unixNow() })
    .where("id", "=", userId)
    .where(sql`quota + credit_line`, ">=", amount)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** One conditional statement: counts `amount` against the token unless its limit would pass. */
export async function takeToken(trx: Executor, tokenId: number, amount: number): Promise<boolean> {
  const res = await trx
    .updateTable("tokens")
    .set({ used_quota: sql`used_quota + ${amount}`, updated_at: unixNow() })
    .where("id", "=", tokenId)
    .where((eb) => eb.or([eb("quota_limit", "is", null), eb(sql`quota_limit - used_quota`, ">=", amount)]))
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
    .values({
      user_id: row.userId,
      token_id: row.tokenId,
      kind: row.kind,
      amount: row.amount,
      reference,
      note,
      created_at: unixNow(),
    })
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
  if (userTaken && tokenTaken) return { collected: excess, uncollected: 0 };
  let users = trx.selectFrom("users").select(["quota", "credit_line"]).where("id", "=", charge.userId);
  if (lockRows) users = users.forUpdate();
  const user = await users.executeTakeFirstOrThrow();
  let token: { quota_limit: number | null; used_quota: number } | undefined;
  if (charge.tokenId !== null) {
    let tokens = trx.selectFrom("tokens").select(["quota_limit", "used_quota"]).where("id", "=", charge.tokenId);
    if (lockRows) tokens = tokens.forUpdate();
    token = await tokens.executeTakeFirst();
  }
  const outcome = collectExcess(excess, {
    quota: Number(user.quota) + (userTaken ? excess : 0),
    creditLine: Number(user.credit_line),
    tokenRemaining:
      token === undefined || token.quota_limit === null ? null : Number(token.quota_limit) - Number(token.used_quota),
  });
  const now = unixNow();
  const userMove = userTaken ? excess - outcome.collected : -outcome.collected;
  await trx
    .updateTable("users")
    .set({ quota: sql`quota + ${userMove}`, used_quota: sql`used_quota - ${userMove}`, updated_at: now })
    .where("id", "=", charge.userId)
    .execute();
  if (charge.tokenId !== null) {
    await trx
      .updateTable("tokens")
      .set({ used_quota: sql`used_quota + ${outcome.collected}`, updated_at: now })
      .where("id", "=", charge.tokenId)
      .execute();
  }
  return outcome;
}
