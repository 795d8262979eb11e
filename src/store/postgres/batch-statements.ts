import { sql } from "kysely";
import { type BatchedMove, type RowMove, rowMoves } from "../../core/ledger/batch-rules.js";
import type { ChargeOpening, ClosingRow, OpenCharge } from "../../core/ledger/charge-rules.js";
import { type Executor, ledgerValues, openChargeValues } from "../ledger-statements.js";
import type { LedgerOp } from "./ledger-op.js";

// The statements of a batch of ledger operations on PostgreSQL: one per kind, for the whole batch.

/** A row of the ledger as a batch writes it. */
export interface BatchRow {
  row: ClosingRow | ChargeOpening["row"];
  reference: string;
  note: string;
}

/** One compare-and-set closing every charge of the batch that is open: the charges as they were. */
export async function closeAll(
  trx: Executor,
  items: readonly { op: LedgerOp }[],
  now: number,
): Promise<Map<string, OpenCharge>> {
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
export async function insertRows(
  trx: Executor,
  rows: BatchRow[],
  holds: Extract<LedgerOp, { kind: "hold" }>[],
  now: number,
): Promise<Set<string>> {
  const charged = new Set<string>();
  if (rows.length > 0) {
    const inserted = await trx
      .insertInto("ledger")
      .values(rows.map(({ row, reference, note }) => ledgerValues(row, reference, note, now)))
      .onConflict((oc) => oc.columns(["reference", "kind"]).doNothing())
      .returning(["reference", "kind"])
      .execute();
    for (const r of inserted) if (r.kind === "charge") charged.add(r.reference);
  }
  const opened = new Set<string>();
  if (holds.length === 0) return opened;
  const inserted = await trx
    .insertInto("charges")
    .values(holds.map(({ opening, meta }) => openChargeValues(opening, meta, now)))
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
export function moveRows(trx: Executor, moves: BatchedMove[], now: number) {
  const { users, tokens } = rowMoves(moves);
  return moveSums(trx, users, tokens, now);
}

/** The statement of moveRows, for sums already made (a user without a token move is fine). */
export async function moveSums(trx: Executor, users: RowMove[], tokens: RowMove[], now: number) {
  const moved = { users: new Set<number>(), tokens: new Set<number>() };
  if (users.length === 0 && tokens.length === 0) return moved;
  const values = (rows: typeof users) =>
    sql.join(rows.map((r) => sql`(${r.id}::bigint, ${r.take}::bigint, ${r.give}::bigint)`));
  const none = sql`select null::bigint as id where false`;
  const userPart =
    users.length === 0
      ? none
      : sql`update users set quota = users.quota - v.take + v.give, used_quota = users.used_quota + v.take - v.give,
          updated_at = ${now}
          from (values ${values(users)}) as v(id, take, give)
          where users.id = v.id and (v.take = 0 or users.quota + users.credit_line >= v.take)
          returning users.id`;
  const tokenPart =
    tokens.length === 0
      ? none
      : sql`update tokens set used_quota = tokens.used_quota + t.take - t.give, updated_at = ${now}
          from (values ${values(tokens)}) as t(id, take, give)
          where tokens.id = t.id
            and (t.take = 0 or tokens.quota_limit is null or tokens.quota_limit - tokens.used_quota >= t.take)
          returning tokens.id`;
  const res = await sql<{ what: string; id: number }>`
    with u as (${userPart}), t as (${tokenPart})
    select 'user' as what, id from u union all select 'token' as what, id from t`.execute(trx);
  for (const r of res.rows) (r.what === "user" ? moved.users : moved.tokens).add(Number(r.id));
  return moved;
}
