import { type Kysely, PostgresAdapter, type RawBuilder, sql } from "kysely";
import { type SeriesBy, seriesBucketCount } from "../core/usage-series.js";
import type { Database } from "./schema.js";
import { DAY_SECONDS, HOUR_SECONDS } from "./usage-aggregates.js";

export interface SeriesQuery {
  /** One user's usage only; all users when absent. */
  userId?: number;
  /** Unix milliseconds; rounded down to the second. */
  fromMs: number;
  /** Unix milliseconds, exclusive. */
  toMs: number;
  /** Width of one bucket (ms); a whole number of seconds, at least one. */
  bucketMs: number;
  by: SeriesBy;
}

export interface SeriesTotals {
  requests: number;
  errors: number;
  /** Quota units. */
  spend: number;
}

export interface SeriesBucket extends SeriesTotals {
  /** Unix seconds: where the bucket starts. */
  start: number;
  series: Record<string, SeriesTotals>;
}

interface Row {
  bucket: number | string;
  key: string | number | null;
  requests: number | string;
  errors: number | string | null;
  spend: number | string | null;
}

function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The model of a task: the name the caller asked for, kept in its properties. */
function taskModel(db: Kysely<Database>): RawBuilder<string> {
  return isPostgres(db)
    ? sql<string>`(properties::json ->> 'origin_model_name')`
    : sql<string>`json_extract(properties, '$.origin_model_name')`;
}

/** How the request log's part of a series is read: from which table, keyed how. */
type LogSource = "hourly" | "daily" | "rows";

/**
 * Where the request log's part of a query is read: buckets of whole hours from an hour's start,
 * over all users, from the hourly totals; buckets of whole days from a day's start, for one user,
 * from the daily totals; anything finer from the rows themselves (the recent past the pruner
 * leaves). The totals outlive the rows, so only the finer buckets answer nothing past the request
 * log's retention.
 */
export function logSourceOf(q: Pick<SeriesQuery, "userId" | "fromMs" | "bucketMs">): LogSource {
  const from = Math.floor(q.fromMs / 1000);
  const width = q.bucketMs / 1000;
  if (q.userId === undefined && width % HOUR_SECONDS === 0 && from % HOUR_SECONDS === 0) return "hourly";
  if (q.userId !== undefined && width % DAY_SECONDS === 0 && from % DAY_SECONDS === 0) return "daily";
  return "rows";
}

/** The request log's part of a series: one grouped query over an indexed time range. */
function logRows(db: Kysely<Database>, q: SeriesQuery, from: number, width: number, to: number): Promise<Row[]> {
  const source = logSourceOf(q);
  // Inlined integers (computed here, never given): a bound number may reach SQLite as a real.
  const bucketOf = (column: string) => sql<number>`(${sql.ref(column)} - ${sql.lit(from)}) / ${sql.lit(width)}`;
  if (source === "rows") {
    const key = q.by === "surface" ? sql`surface` : q.by === "model" ? sql`model` : sql`channel_id`;
    let logs = db
      .selectFrom("request_logs")
      .select([
        bucketOf("created_at").as("bucket"),
        key.as("key"),
        sql<number>`count(*)`.as("requests"),
        sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as("errors"),
        sql<number>`sum(quota)`.as("spend"),
      ])
      .where("created_at", ">=", from)
      .where("created_at", "<", to);
    if (q.userId !== undefined) logs = logs.where("user_id", "=", q.userId);
    return logs.groupBy([sql`1`, sql`2`]).execute() as Promise<Row[]>;
  }
  // A row without a channel counts under channel 0 in the totals: null here, as in the rows.
  const key = q.by === "surface" ? sql`surface` : q.by === "model" ? sql`model` : sql`nullif(channel_id, 0)`;
  const counters = [
    key.as("key"),
    sql<number>`sum(requests)`.as("requests"),
    sql<number>`sum(errors)`.as("errors"),
    sql<number>`sum(quota)`.as("spend"),
  ];
  if (source === "hourly") {
    return db
      .selectFrom("usage_hourly")
      .select([bucketOf("hour").as("bucket"), ...counters])
      .where("hour", ">=", from)
      .where("hour", "<", to)
      .groupBy([sql`1`, sql`2`])
      .execute() as Promise<Row[]>;
  }
  return db
    .selectFrom("usage_daily")
    .select([bucketOf("day").as("bucket"), ...counters])
    .where("user_id", "=", q.userId as number)
    .where("day", ">=", from)
    .where("day", "<", to)
    .groupBy([sql`1`, sql`2`])
    .execute() as Promise<Row[]>;
}

/**
 * Requests, errors and spend per bucket, split by surface, model or channel. Two sources, each
 * read by one grouped query over an indexed time range:
 * - the request log (content, chat and image calls), from its totals or its rows (see
 *   logSourceOf): an error is a status of 400 or more, spend is the quota the call was billed;
 * - tasks, by submit time: an error is a task that ended FAILURE, spend is the task's price unless
 *   it failed (a failed task is refunded).
 * Every bucket of the range is answered, empty ones with zeros.
 */
export async function spendSeries(db: Kysely<Database>, q: SeriesQuery): Promise<SeriesBucket[]> {
  const count = seriesBucketCount(q);
  const from = Math.floor(q.fromMs / 1000);
  const width = q.bucketMs / 1000;
  const to = from + count * width;
  const bucket = sql<number>`(created_at - ${sql.lit(from)}) / ${sql.lit(width)}`;

  const taskKey = q.by === "surface" ? sql`platform` : q.by === "model" ? taskModel(db) : sql`channel_id`;
  let tasks = db
    .selectFrom("tasks")
    .select([
      bucket.as("bucket"),
      taskKey.as("key"),
      sql<number>`count(*)`.as("requests"),
      sql<number>`sum(case when status = 'FAILURE' then 1 else 0 end)`.as("errors"),
      sql<number>`sum(case when status = 'FAILURE' then 0 else quota end)`.as("spend"),
    ])
    .where("created_at", ">=", from)
    .where("created_at", "<", to);
  if (q.userId !== undefined) tasks = tasks.where("user_id", "=", q.userId);

  const [fromLog, taskRows] = await Promise.all([
    logRows(db, q, from, width, to),
    tasks.groupBy([sql`1`, sql`2`]).execute() as Promise<Row[]>,
  ]);

  const buckets: SeriesBucket[] = Array.from({ length: count }, (_, i) => ({
    start: from + i * width,
    requests: 0,
    errors: 0,
    spend: 0,
    series: {},
  }));
  for (const row of [...fromLog, ...taskRows]) {
    const b = buckets[Number(row.bucket)];
    if (!b) continue;
    const key = row.key === null || row.key === "" ? "unknown" : String(row.key);
    const requests = Number(row.requests);
    const errors = Number(row.errors ?? 0);
    const spend = Number(row.spend ?? 0);
    b.requests += requests;
    b.errors += errors;
    b.spend += spend;
    const s = b.series[key] ?? { requests: 0, errors: 0, spend: 0 };
    s.requests += requests;
    s.errors += errors;
    s.spend += spend;
    b.series[key] = s;
  }
  return buckets;
}
