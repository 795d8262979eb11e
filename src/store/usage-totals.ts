import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

/** What the usage totals are grouped by: one row per user, model, channel, surface or day. */
export type UsageBy = "user" | "model" | "channel" | "surface" | "day";

export interface UsageQuery {
  /** Unix seconds of a UTC day's start: the first day counted. */
  fromDay: number;
  /** Unix seconds of a UTC day's start: the first day not counted. */
  toDay: number;
  userId?: number;
  model?: string;
  channelId?: number;
  surface?: string;
  by: UsageBy;
  /** Most rows answered (the largest spends first, or the days in order). */
  limit: number;
}

export interface UsageTotal {
  /** The user id, model, channel id, surface or day (unix seconds); null: no user or no channel. */
  key: string | number | null;
  requests: number;
  errors: number;
  spend: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

/**
 * The request log's totals over whole days, filtered and grouped by one dimension, from the usage
 * totals (never from the rows, so the request log's retention does not shorten them), each query
 * from the smallest table that answers it: one user's from the daily totals (kept per user, read
 * by its user index); every user's spend from the daily totals per user; the users of a model,
 * channel or surface from the daily totals; anything else from the hourly ones (every user of an
 * hour in one row per model, channel and surface).
 */
export async function usageTotals(db: Kysely<Database>, q: UsageQuery): Promise<UsageTotal[]> {
  const filtered = q.model !== undefined || q.channelId !== undefined || q.surface !== undefined;
  const table =
    q.userId !== undefined
      ? "usage_daily"
      : q.by === "user"
        ? filtered
          ? "usage_daily"
          : "usage_daily_users"
        : "usage_hourly";
  const time = table === "usage_hourly" ? sql.ref("hour") : sql.ref("day");
  // A row without a user or a channel counts under 0 in the totals; answered as null.
  const key =
    q.by === "user"
      ? sql`nullif(user_id, 0)`
      : q.by === "model"
        ? sql`model`
        : q.by === "channel"
          ? sql`nullif(channel_id, 0)`
          : q.by === "surface"
            ? sql`surface`
            : sql`${time} - ${time} % ${sql.lit(86_400)}`;
  const filters = [
    sql`${time} >= ${sql.lit(Math.trunc(q.fromDay))}`,
    sql`${time} < ${sql.lit(Math.trunc(q.toDay))}`,
    ...(q.userId === undefined ? [] : [sql`user_id = ${q.userId}`]),
    ...(q.model === undefined ? [] : [sql`model = ${q.model}`]),
    ...(q.channelId === undefined ? [] : [sql`channel_id = ${q.channelId}`]),
    ...(q.surface === undefined ? [] : [sql`surface = ${q.surface}`]),
  ];
  const order = q.by === "day" ? sql`1` : sql`4 desc, 1`;
  const { rows } = await sql<Record<string, string | number | null>>`
    select ${key} as key, sum(requests) as requests, sum(errors) as errors, sum(quota) as spend,
      sum(prompt_tokens) as prompt_tokens, sum(completion_tokens) as completion_tokens,
      sum(cached_tokens) as cached_tokens
    from ${sql.table(table)}
    where ${sql.join(filters, sql` and `)}
    group by 1 order by ${order} limit ${sql.lit(Math.trunc(q.limit))}`.execute(db);
  return rows.map((r) => ({
    key: r.key === null ? null : q.by === "model" || q.by === "surface" ? String(r.key) : Number(r.key),
    requests: Number(r.requests),
    errors: Number(r.errors),
    spend: Number(r.spend),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    cached_tokens: Number(r.cached_tokens),
  }));
}
