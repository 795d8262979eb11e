import { type Kysely, sql } from "kysely";
import type { RequestLogsTable } from "./schema.js";

// The request log's totals, added to in the same transaction as the rows of each flush of the log
// (`request-logs.ts`), so they are exact, and never pruned with the rows: the charts and the usage
// answers read them, whatever the request log's retention left. Three tables, each the smallest
// that answers its questions:
// - `usage_daily`: per UTC day, user, model, channel and surface (a user's own spend; any question
//   about one user);
// - `usage_daily_users`: per UTC day and user (who spent what, over all users);
// - `usage_hourly`: per hour, model, channel and surface over all users (the charts; any question
//   not about users).
// A row without a user or a channel counts under 0.

export const DAY_SECONDS = 86_400;
export const HOUR_SECONDS = 3_600;

/** What a request-log row brings to the totals. */
export type UsageSource = Pick<
  RequestLogsTable,
  "created_at" | "surface" | "model" | "prompt_tokens" | "completion_tokens" | "cached_tokens" | "quota" | "status"
> & { user_id?: number | null; channel_id?: number | null };

export const COUNTERS = ["requests", "errors", "quota", "prompt_tokens", "completion_tokens", "cached_tokens"] as const;

type KeyValue = number | string;

/** A table of totals: its key columns, each as a function of a row and as SQL over the log's columns. */
interface TotalsTable {
  name: string;
  key: readonly string[];
  keyOf(r: UsageSource): KeyValue[];
  keySql: readonly string[];
}

const day = (at: number) => at - (at % DAY_SECONDS);
const hour = (at: number) => at - (at % HOUR_SECONDS);
const DAY_SQL = `created_at - created_at % ${DAY_SECONDS}`;
const HOUR_SQL = `created_at - created_at % ${HOUR_SECONDS}`;

export const TOTALS_TABLES: readonly TotalsTable[] = [
  {
    name: "usage_daily",
    key: ["day", "user_id", "model", "channel_id", "surface"],
    keyOf: (r) => [day(r.created_at), r.user_id ?? 0, r.model, r.channel_id ?? 0, r.surface],
    keySql: [DAY_SQL, "coalesce(user_id, 0)", "model", "coalesce(channel_id, 0)", "surface"],
  },
  {
    name: "usage_daily_users",
    key: ["day", "user_id"],
    keyOf: (r) => [day(r.created_at), r.user_id ?? 0],
    keySql: [DAY_SQL, "coalesce(user_id, 0)"],
  },
  {
    name: "usage_hourly",
    key: ["hour", "model", "channel_id", "surface"],
    keyOf: (r) => [hour(r.created_at), r.model, r.channel_id ?? 0, r.surface],
    keySql: [HOUR_SQL, "model", "coalesce(channel_id, 0)", "surface"],
  },
];

function compareKeys(a: KeyValue[], b: KeyValue[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as KeyValue;
    const y = b[i] as KeyValue;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * What a batch of rows adds to one table: per key, its values then the counters' increments, in
 * key order (two writers at once then lock the same rows in the same order).
 */
export function incrementsOf(table: TotalsTable, rows: readonly UsageSource[]): KeyValue[][] {
  const out = new Map<string, KeyValue[]>();
  const width = table.key.length;
  for (const r of rows) {
    const key = table.keyOf(r);
    const id = key.join("\u0000");
    let t = out.get(id);
    if (!t) {
      t = [...key, 0, 0, 0, 0, 0, 0];
      out.set(id, t);
    }
    (t[width] as number) += 1;
    if (r.status >= 400) (t[width + 1] as number) += 1;
    (t[width + 2] as number) += Number(r.quota);
    (t[width + 3] as number) += Number(r.prompt_tokens);
    (t[width + 4] as number) += Number(r.completion_tokens);
    (t[width + 5] as number) += Number(r.cached_tokens);
  }
  return [...out.values()].sort(compareKeys);
}

/** `requests = t.requests + excluded.requests, ...` for the upserts. */
function increments(alias: string): string {
  return COUNTERS.map((c) => `${c} = ${alias}.${c} + excluded.${c}`).join(", ");
}

const columnsOf = (t: TotalsTable) => [...t.key, ...COUNTERS].join(", ");

/** SQLite: the upsert of one key's increments into `table`, a statement prepared once. */
export function sqliteUpsert(table: TotalsTable): string {
  return `insert into ${table.name} (${columnsOf(table)})
    values (${[...table.key, ...COUNTERS].map(() => "?").join(", ")})
    on conflict (${table.key.join(", ")}) do update set ${increments(table.name)}`;
}

/** The counters of a grouped select over request-log rows, as PostgreSQL and SQLite write them. */
const GROUPED_COUNTERS = `count(*), sum(case when status >= 400 then 1 else 0 end), sum(quota),
  sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens)`;

/** `insert into <table> select <key>, <counters> from <rows> group by <key>`. */
function groupedInsert(table: TotalsTable, rows: string, alias?: string): string {
  const positions = table.key.map((_, i) => i + 1).join(", ");
  return `insert into ${table.name}${alias ? ` as ${alias}` : ""} (${columnsOf(table)})
    select ${table.keySql.join(", ")}, ${GROUPED_COUNTERS}
    from ${rows} group by ${positions} order by ${positions}`;
}

/**
 * PostgreSQL: what a flush's rows (`rows`, a relation with the request log's columns) add to each
 * table, as data-modifying parts of the flush's one statement (see `request-logs.ts`): grouped and
 * in key order, so that two instances flushing at once lock the same rows in the same order.
 */
export function postgresTotalsFrom(rows: string): string[] {
  return TOTALS_TABLES.map(
    (t) => `${groupedInsert(t, rows, "t")} on conflict (${t.key.join(", ")}) do update set ${increments("t")}`,
  );
}

/** Adds a batch's increments through the query builder (inside the caller's transaction). */
export async function addUsageTotals(db: Kysely<any>, rows: readonly UsageSource[]): Promise<void> {
  for (const table of TOTALS_TABLES) {
    for (const values of incrementsOf(table, rows)) {
      await sql`insert into ${sql.table(table.name)} (${sql.raw(columnsOf(table))}) values (${sql.join(values)})
        on conflict (${sql.raw(table.key.join(", "))}) do update set ${sql.raw(increments(table.name))}`.execute(db);
    }
  }
}

/**
 * Fills every table of totals from the rows of the request log, replacing what they held: the
 * totals of a store whose rows were written without them (migration 013, a bulk load).
 */
export async function backfillUsageTotals(db: Kysely<any>): Promise<void> {
  for (const table of TOTALS_TABLES) {
    await sql`delete from ${sql.table(table.name)}`.execute(db);
    await sql.raw(groupedInsert(table, "request_logs")).execute(db);
  }
}
