import { type BatchedMove, type RowMove, rowMoves } from "../../core/ledger/batch-rules.js";
import type { ChargeOpening, ClosingRow, OpenCharge } from "../../core/ledger/charge-rules.js";
import { orNothingTaken, tokenTakeFits, userTakeFits } from "../ledger-guards.js";
import type { Executor } from "../ledger-statements.js";
import { fixedStatement } from "./fixed-statement.js";
import type { LedgerOp } from "./ledger-op.js";

// The statements of a batch of ledger operations on PostgreSQL: one per kind, for the whole batch.
// Each has one text whatever the batch's size (its rows go in as arrays, one per column, that the
// statement unnests), so that none is built or compiled per batch.

/** A row of the ledger as a batch writes it. */
export interface BatchRow {
  row: ClosingRow | ChargeOpening["row"];
  reference: string;
  note: string;
}

export const CLOSE_ALL = fixedStatement<ClosedRow>(
  `update charges set state = v.state, settled = v.settled, close_reason = v.reason, closed_at = $5::bigint
  from unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) as v(reference, state, settled, reason)
  where charges.reference = v.reference and charges.state = 'open'
  returning charges.reference, charges.user_id, charges.token_id, charges.held`,
);

interface ClosedRow {
  reference: string;
  user_id: number;
  token_id: number | null;
  held: number;
}

/** The closings among `items`, one array per column of their charges' close. */
export function closingColumns(items: readonly { op: LedgerOp }[]) {
  const columns = {
    references: [] as string[],
    states: [] as string[],
    settled: [] as (number | null)[],
    reasons: [] as string[],
  };
  for (const { op } of items) {
    if (op.kind === "hold") continue;
    columns.references.push(op.reference);
    columns.states.push(op.kind === "refund" ? "refunded" : "settled");
    columns.settled.push(op.kind === "refund" ? null : op.actual);
    columns.reasons.push(op.note.slice(0, 200));
  }
  return columns;
}

/** CLOSE_ALL's parameters for the closings among `items`; null when there are none. */
export function closeParameters(items: readonly { op: LedgerOp }[], now: number): unknown[] | null {
  const { references, states, settled, reasons } = closingColumns(items);
  return references.length === 0 ? null : [references, states, settled, reasons, now];
}

/** The charges CLOSE_ALL found open, by reference, as they were. */
export function readClosed(rows: readonly ClosedRow[]): Map<string, OpenCharge> {
  const found = new Map<string, OpenCharge>();
  for (const r of rows) {
    found.set(r.reference, {
      userId: Number(r.user_id),
      tokenId: r.token_id === null ? null : Number(r.token_id),
      held: Number(r.held),
    });
  }
  return found;
}

/** One compare-and-set closing every charge of the batch that is open: the charges as they were. */
export async function closeAll(
  trx: Executor,
  items: readonly { op: LedgerOp }[],
  now: number,
): Promise<Map<string, OpenCharge>> {
  const parameters = closeParameters(items, now);
  if (!parameters) return new Map();
  return readClosed((await CLOSE_ALL(trx, parameters)).rows);
}

export interface WrittenRow {
  what: "ledger" | "charge" | "user" | "token";
  reference: string | null;
  id: number | null;
}

/** The common table expressions of the writes (parameters $1 to $19), for WRITE_BATCH and WRITE_TOGETHER. */
export const WRITE_CTES = `l as (
    insert into ledger (user_id, token_id, kind, amount, reference, note, created_at)
    select r.user_id, r.token_id, r.kind, r.amount, r.reference, r.note, $19::bigint
    from unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[])
      as r(user_id, token_id, kind, amount, reference, note)
    on conflict (reference, kind) do nothing
    returning reference, kind
  ), c as (
    insert into charges (reference, user_id, token_id, state, held, seen, settled, close_by, instance, created_at, closed_at)
    select h.reference, h.user_id, h.token_id, 'open', h.held, null, null, h.close_by, h.instance, $19::bigint, null
    from unnest($7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[])
      as h(reference, user_id, token_id, held, close_by, instance)
    on conflict (reference) do nothing
    returning reference
  ), u as (
    update users set quota = users.quota - v.take + v.give, used_quota = users.used_quota + v.take - v.give,
      updated_at = $19::bigint
    from unnest($13::bigint[], $14::bigint[], $15::bigint[]) as v(id, take, give)
    where users.id = v.id and ${orNothingTaken(userTakeFits)("v.take")}
    returning users.id
  ), t as (
    update tokens set used_quota = tokens.used_quota + v.take - v.give, updated_at = $19::bigint
    from unnest($16::bigint[], $17::bigint[], $18::bigint[]) as v(id, take, give)
    where tokens.id = v.id
      and ${orNothingTaken(tokenTakeFits)("v.take")}
    returning tokens.id
  )`;

/** What the writes return, one row per ledger row of a hold, charge opened, user and token moved. */
export const WRITE_ROWS = `select 'ledger' as what, reference, null::bigint as id from l where kind = 'charge'
  union all select 'charge', reference, null from c
  union all select 'user', null, id from u
  union all select 'token', null, id from t`;

/**
 * Every write of a batch in one statement: the ledger rows, the charges opened (state `open`, as
 * `openChargeValues` writes them), and the users' and tokens' sums moved (the takes only where they
 * fit: the hold rule against the balance before the give-backs, the token's limit; the give-backs
 * always). Its parts touch four different tables, so that running them in one statement (one
 * snapshot) is the same as running them one after another.
 */
const WRITE_BATCH = fixedStatement<WrittenRow>(`with ${WRITE_CTES}
  ${WRITE_ROWS}`);

/** The writes of a batch, as writeBatch and WRITE_TOGETHER take them. */
export interface BatchWrite {
  rows: readonly BatchRow[];
  holds: readonly Extract<LedgerOp, { kind: "hold" }>[];
  users: readonly RowMove[];
  tokens: readonly RowMove[];
}

/** What a batch's writes did: the holds whose charge was opened, the rows whose sums moved. */
export interface Written {
  opened: Set<string>;
  moved: { users: Set<number>; tokens: Set<number> };
}

/** The parameters of WRITE_BATCH and WRITE_TOGETHER. */
export function writeParameters(write: BatchWrite, now: number): unknown[] {
  const { rows, holds, users, tokens } = write;
  const ledger = { user: [] as number[], token: [] as (number | null)[], kind: [] as string[], amount: [] as number[] };
  const ledgerText = { reference: [] as string[], note: [] as string[] };
  for (const { row, reference, note } of rows) {
    ledger.user.push(row.userId);
    ledger.token.push(row.tokenId);
    ledger.kind.push(row.kind);
    ledger.amount.push(row.amount);
    ledgerText.reference.push(reference);
    ledgerText.note.push(note);
  }
  const sums = (moves: readonly RowMove[]) => [
    moves.map((m) => m.id),
    moves.map((m) => m.take),
    moves.map((m) => m.give),
  ];
  return [
    ledger.user,
    ledger.token,
    ledger.kind,
    ledger.amount,
    ledgerText.reference,
    ledgerText.note,
    holds.map((h) => h.opening.row.reference),
    holds.map((h) => h.opening.row.userId),
    holds.map((h) => h.opening.row.tokenId),
    holds.map((h) => h.opening.held),
    holds.map((h) => h.meta.closeBy),
    holds.map((h) => h.meta.instance),
    ...sums(users),
    ...sums(tokens),
    now,
  ];
}

/** What the writes' rows say: the holds whose charge was opened, the rows whose sums moved. */
export function readWritten(rows: readonly WrittenRow[]): Written {
  const charged = new Set<string>();
  const chargeOpened: string[] = [];
  const written: Written = { opened: new Set(), moved: { users: new Set(), tokens: new Set() } };
  for (const r of rows) {
    if (r.what === "ledger") charged.add(r.reference as string);
    else if (r.what === "charge") chargeOpened.push(r.reference as string);
    else if (r.what === "user") written.moved.users.add(Number(r.id));
    else written.moved.tokens.add(Number(r.id));
  }
  for (const reference of chargeOpened) if (charged.has(reference)) written.opened.add(reference);
  return written;
}

/**
 * Writes `rows` to the ledger, opens the charges of `holds`, and moves the users' and tokens'
 * sums, in one statement. A hold counts as opened when both its charge row and its ledger row
 * were written (a reference already taken writes neither).
 */
export async function writeBatch(trx: Executor, write: BatchWrite, now: number): Promise<Written> {
  return readWritten((await WRITE_BATCH(trx, writeParameters(write, now))).rows);
}

/** One statement writing every ledger row and opening every charge: the references of those opened. */
export async function insertRows(
  trx: Executor,
  rows: BatchRow[],
  holds: Extract<LedgerOp, { kind: "hold" }>[],
  now: number,
): Promise<Set<string>> {
  if (rows.length === 0 && holds.length === 0) return new Set();
  return (await writeBatch(trx, { rows, holds, users: [], tokens: [] }, now)).opened;
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
  if (users.length === 0 && tokens.length === 0) return { users: new Set<number>(), tokens: new Set<number>() };
  return (await writeBatch(trx, { rows: [], holds: [], users, tokens }, now)).moved;
}
