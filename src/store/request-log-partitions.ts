import { type Kysely, sql } from "kysely";

// PostgreSQL only: the request log is partitioned by month of `created_at` (migration 013), so
// that a month past the retention is dropped whole (no row by row delete, no table bloat). A
// DEFAULT partition takes any row no month partition holds, so an insert never fails for want of
// one; the maintenance below creates each month's partition ahead of it and moves into it any row
// the default took meanwhile.

/** Months after the current one whose partitions exist ahead of their rows. */
export const MONTHS_AHEAD = 2;

const PARENT = "request_logs";
const DEFAULT_PARTITION = "request_logs_default";

/** Unix seconds of the start of the UTC month holding `at` (unix seconds), moved by `months`. */
export function monthStart(at: number, months = 0): number {
  const d = new Date(at * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1) / 1000;
}

/** The name of the partition of the month starting at `start`: `request_logs_p2026_03`. */
export function partitionName(start: number): string {
  const d = new Date(start * 1000);
  return `${PARENT}_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
}

export interface Partition {
  name: string;
  /** Range of `created_at` the partition holds, `from` included; null for the default partition. */
  range: { from: number; to: number } | null;
}

/** True when the request log is a partitioned table (PostgreSQL after migration 013). */
export async function isPartitioned(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`
    select c.relkind as kind from pg_class c
    where c.oid = to_regclass(${PARENT})`.execute(db);
  return rows[0]?.kind === "p";
}

/** The request log's partitions, months in order, the default last. */
export async function listPartitions(db: Kysely<any>): Promise<Partition[]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${PARENT})`.execute(db);
  const parts = rows.map((r) => {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    return { name: r.name, range: m ? { from: Number(m[1]), to: Number(m[2]) } : null };
  });
  return parts.sort(
    (a, b) => (a.range?.from ?? Number.POSITIVE_INFINITY) - (b.range?.from ?? Number.POSITIVE_INFINITY),
  );
}

/**
 * Creates the partition of the month starting at `start`. Rows of that month the default
 * partition took are moved into it, in the same transaction (the default is detached meanwhile:
 * PostgreSQL refuses a new partition whose rows the default holds).
 */
async function createMonthPartition(trx: Kysely<any>, start: number): Promise<void> {
  const end = monthStart(start, 1);
  const name = sql.id(partitionName(start));
  const range = sql`for values from (${sql.lit(start)}) to (${sql.lit(end)})`;
  const stray = await sql`select 1 from ${sql.id(DEFAULT_PARTITION)}
    where created_at >= ${sql.lit(start)} and created_at < ${sql.lit(end)} limit 1`.execute(trx);
  if (stray.rows.length === 0) {
    await sql`create table ${name} partition of ${sql.id(PARENT)} ${range}`.execute(trx);
    return;
  }
  await sql`alter table ${sql.id(PARENT)} detach partition ${sql.id(DEFAULT_PARTITION)}`.execute(trx);
  await sql`create table ${name} partition of ${sql.id(PARENT)} ${range}`.execute(trx);
  await sql`with moved as (
      delete from ${sql.id(DEFAULT_PARTITION)}
      where created_at >= ${sql.lit(start)} and created_at < ${sql.lit(end)} returning *)
    insert into ${name} select * from moved`.execute(trx);
  await sql`alter table ${sql.id(PARENT)} attach partition ${sql.id(DEFAULT_PARTITION)} default`.execute(trx);
}

/** Creates the default partition when it is missing. */
export async function ensureDefaultPartition(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists ${sql.id(DEFAULT_PARTITION)} partition of ${sql.id(PARENT)} default`.execute(db);
}

/**
 * Creates the missing month partitions from the month of `fromAt` through the month of `toAt`
 * (unix seconds); answers the names created. Run in a transaction: a month's creation and the
 * move of its stray rows commit together.
 */
export async function ensureMonthPartitions(trx: Kysely<any>, fromAt: number, toAt: number): Promise<string[]> {
  const existing = new Set((await listPartitions(trx)).map((p) => p.range?.from));
  const created: string[] = [];
  for (let start = monthStart(fromAt); start <= toAt; start = monthStart(start, 1)) {
    if (existing.has(start)) continue;
    await createMonthPartition(trx, start);
    created.push(partitionName(start));
  }
  return created;
}

/** Drops every month partition all of whose rows are older than `cutoff` (unix seconds). */
export async function dropPartitionsBefore(trx: Kysely<any>, cutoff: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const p of await listPartitions(trx)) {
    if (p.range === null || p.range.to > cutoff) continue;
    await sql`drop table ${sql.id(p.name)}`.execute(trx);
    dropped.push(p.name);
  }
  return dropped;
}

/** What one round of the partitions' upkeep did. */
export interface PartitionUpkeep {
  created: string[];
  dropped: string[];
  /** False when another instance was doing it (this round did nothing). */
  ran: boolean;
}

/** A lock key of the upkeep, so that two instances never create or drop the same partition. */
const UPKEEP_LOCK = 0x6d675f72; // "mg_r"

/**
 * One round of the partitions' upkeep, in one short transaction: the partitions of the current
 * month and of the MONTHS_AHEAD next ones exist; with `cutoff`, the months wholly before it are
 * dropped. Locks wait at most `lockTimeoutMs` (the drop needs the parent table alone for an
 * instant; behind a long query it gives up and the next round tries again) rather than queue the
 * request log's inserts behind them.
 */
export async function upkeepPartitions(
  db: Kysely<any>,
  nowAt: number,
  cutoff: number | null,
  lockTimeoutMs = 2000,
): Promise<PartitionUpkeep> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(${sql.lit(UPKEEP_LOCK)}) as locked`.execute(trx);
    if (!rows[0]?.locked) return { created: [], dropped: [], ran: false };
    await sql`select set_config('lock_timeout', ${String(Math.max(1, Math.trunc(lockTimeoutMs)))}, true)`.execute(trx);
    await ensureDefaultPartition(trx);
    const created = await ensureMonthPartitions(trx, nowAt, monthStart(nowAt, MONTHS_AHEAD));
    const dropped = cutoff === null ? [] : await dropPartitionsBefore(trx, cutoff);
    return { created, dropped, ran: true };
  });
}
