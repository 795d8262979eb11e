import { type CreateTableBuilder, sql } from "kysely";
import { ensureDefaultPartition, ensureMonthPartitions, MONTHS_AHEAD, monthStart } from "../request-log-partitions.js";
import { backfillUsageTotals } from "../usage-aggregates.js";
import { type AnyDb, isPostgres } from "./dialect.js";

/** The request log's indexes (migrations 001 and 012), made again on the partitioned table. */
const LOG_INDEXES: [name: string, columns: string[]][] = [
  ["request_logs_user_idx", ["user_id", "id"]],
  ["request_logs_time_idx", ["created_at"]],
  ["request_logs_user_time_idx", ["user_id", "created_at"]],
  ["request_logs_channel_idx", ["channel_id", "id"]],
  ["request_logs_model_idx", ["model", "id"]],
  ["request_logs_status_idx", ["status", "id"]],
];

/** The request log's columns after its id, as migration 001 made them. */
const LOG_COLUMNS = `
  created_at bigint not null,
  request_id text not null,
  user_id bigint,
  token_id bigint,
  channel_id bigint,
  surface text not null,
  model text not null,
  prompt_tokens bigint not null default 0,
  completion_tokens bigint not null default 0,
  cached_tokens bigint not null default 0,
  quota bigint not null default 0,
  latency_ms integer not null default 0,
  status integer not null,
  error text`;

const LOG_COLUMN_NAMES =
  "id, created_at, request_id, user_id, token_id, channel_id, surface, model, prompt_tokens, " +
  "completion_tokens, cached_tokens, quota, latency_ms, status, error";

const COUNTERS = ["requests", "errors", "quota", "prompt_tokens", "completion_tokens", "cached_tokens"];

/**
 * A table of usage totals: its key columns, then the counters. On SQLite it is stored in its
 * primary key's order (`without rowid`), so a range of days is read side by side. On PostgreSQL
 * its pages keep a fifth free: a flush adds to counters no index holds, and with room on the page
 * PostgreSQL writes the new version of the row there without new index entries (a HOT update),
 * about a third less work per key.
 */
async function createTotals(db: AnyDb, name: string, key: [column: string, type: "bigint" | "text"][]) {
  let table: CreateTableBuilder<string, string> = db.schema.createTable(name);
  for (const [column, type] of key) table = table.addColumn(column, type, (c) => c.notNull());
  for (const column of COUNTERS) table = table.addColumn(column, "bigint", (c) => c.notNull());
  table = table.addPrimaryKeyConstraint(`${name}_pk`, key.map(([column]) => column) as never);
  table = table.modifyEnd(isPostgres(db) ? sql`with (fillfactor = 80)` : sql`without rowid`);
  await table.execute();
}

/**
 * PostgreSQL: the request log becomes a table partitioned by month of `created_at`, its rows
 * moved in. The primary key of a partitioned table must hold the partition key: (id, created_at);
 * ids still come from the same sequence, so they stay unique and keep growing.
 */
async function partitionRequestLog(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: number | null; last: number | null }>`
    select min(created_at) as first, max(created_at) as last from request_logs`.execute(db);
  const now = Math.floor(Date.now() / 1000);
  const first = Number(rows[0]?.first ?? now);
  const last = Math.max(now, Number(rows[0]?.last ?? now));

  await sql`alter table request_logs rename to request_logs_unpartitioned`.execute(db);
  await sql`alter table request_logs_unpartitioned rename constraint request_logs_pkey to request_logs_unpartitioned_pkey`.execute(
    db,
  );
  for (const [name] of LOG_INDEXES) await db.schema.dropIndex(name).execute();
  await sql`alter sequence request_logs_id_seq owned by none`.execute(db);
  await sql
    .raw(`create table request_logs (
      id bigint not null default nextval('request_logs_id_seq'),${LOG_COLUMNS},
      primary key (id, created_at)) partition by range (created_at)`)
    .execute(db);
  await ensureDefaultPartition(db);
  await ensureMonthPartitions(db, first, monthStart(last, MONTHS_AHEAD));
  await sql
    .raw(`insert into request_logs (${LOG_COLUMN_NAMES}) select ${LOG_COLUMN_NAMES} from request_logs_unpartitioned`)
    .execute(db);
  await sql`drop table request_logs_unpartitioned`.execute(db);
  await sql`alter sequence request_logs_id_seq owned by request_logs.id`.execute(db);
  // Made once the rows are in: one build per index rather than one insert per row and index.
  for (const [name, columns] of LOG_INDEXES) {
    await db.schema.createIndex(name).on("request_logs").columns(columns).execute();
  }
}

/** PostgreSQL, back to one table. */
async function unpartitionRequestLog(db: AnyDb): Promise<void> {
  await sql`alter table request_logs rename to request_logs_partitioned`.execute(db);
  await sql`alter table request_logs_partitioned rename constraint request_logs_pkey to request_logs_partitioned_pkey`.execute(
    db,
  );
  for (const [name] of LOG_INDEXES) await db.schema.dropIndex(name).execute();
  await sql`alter sequence request_logs_id_seq owned by none`.execute(db);
  await sql
    .raw(`create table request_logs (
      id bigint primary key default nextval('request_logs_id_seq'),${LOG_COLUMNS})`)
    .execute(db);
  await sql
    .raw(`insert into request_logs (${LOG_COLUMN_NAMES}) select ${LOG_COLUMN_NAMES} from request_logs_partitioned`)
    .execute(db);
  await sql`drop table request_logs_partitioned cascade`.execute(db);
  await sql`alter sequence request_logs_id_seq owned by request_logs.id`.execute(db);
  for (const [name, columns] of LOG_INDEXES) {
    await db.schema.createIndex(name).on("request_logs").columns(columns).execute();
  }
}

/**
 * What keeps the growing tables bounded (docs/operations.md, "Retention"):
 * - `usage_daily` (per day, user, model, channel, surface), `usage_daily_users` (per day and user)
 *   and `usage_hourly` (per hour, model, channel, surface): the request log's totals, kept with
 *   every flush of the log and read by the charts and the usage answers, so that they outlive the
 *   rows (`usage-aggregates.ts`); filled here from the rows there are;
 * - indexes on the times the pruner deletes by (task events, webhook deliveries);
 * - PostgreSQL: the request log partitioned by month.
 */
export async function up(db: AnyDb): Promise<void> {
  await createTotals(db, "usage_daily", [
    ["day", "bigint"],
    ["user_id", "bigint"],
    ["model", "text"],
    ["channel_id", "bigint"],
    ["surface", "text"],
  ]);
  // One user's days; and the users of a model or a channel over days. Only a new key writes them:
  // an upsert that adds to a key's counters leaves its index entries as they are.
  await db.schema.createIndex("usage_daily_user_idx").on("usage_daily").columns(["user_id", "day"]).execute();
  await db.schema.createIndex("usage_daily_model_idx").on("usage_daily").columns(["model", "day"]).execute();
  await db.schema.createIndex("usage_daily_channel_idx").on("usage_daily").columns(["channel_id", "day"]).execute();
  await createTotals(db, "usage_daily_users", [
    ["day", "bigint"],
    ["user_id", "bigint"],
  ]);
  await createTotals(db, "usage_hourly", [
    ["hour", "bigint"],
    ["model", "text"],
    ["channel_id", "bigint"],
    ["surface", "text"],
  ]);
  await backfillUsageTotals(db);

  await db.schema.createIndex("task_events_at_idx").on("task_events").column("at").execute();
  await db.schema.createIndex("webhook_deliveries_created_idx").on("webhook_deliveries").column("created_at").execute();

  if (isPostgres(db)) await partitionRequestLog(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db)) await unpartitionRequestLog(db);
  await db.schema.dropIndex("webhook_deliveries_created_idx").ifExists().execute();
  await db.schema.dropIndex("task_events_at_idx").ifExists().execute();
  await db.schema.dropTable("usage_hourly").ifExists().execute();
  await db.schema.dropTable("usage_daily_users").ifExists().execute();
  await db.schema.dropTable("usage_daily").ifExists().execute();
}
