import { sql } from "kysely";
import type { AnyDb } from "./dialect.js";

/** The per-bucket rates a price gains beside `input_per_million` and `output_per_million` (null: falls back). */
export const RATE_COLUMNS = [
  "cache_read_per_million",
  "cache_write_5m_per_million",
  "cache_write_1h_per_million",
  "audio_input_per_million",
  "reasoning_per_million",
  "audio_output_per_million",
] as const;

/** The request log's token buckets (null: the call's surface has no such bucket). */
export const BUCKET_COLUMNS = [
  "input_tokens",
  "cache_read_tokens",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "audio_input_tokens",
  "output_tokens",
  "reasoning_tokens",
  "audio_output_tokens",
] as const;

/**
 * The price model (docs/price-model.md): a price names its unit and has a rate per token bucket;
 * the request log records the buckets of each call and whether its usage was estimated. A stored
 * cached ratio becomes the cache-read rate (input x ratio), so that no bill changes. On
 * PostgreSQL the request log is partitioned by month: a column added to it is added to every
 * partition, and to those made later.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("prices")
    .addColumn("unit", "text", (c) => c.notNull().defaultTo("call"))
    .execute();
  for (const column of RATE_COLUMNS) {
    await db.schema.alterTable("prices").addColumn(column, "double precision").execute();
  }
  await sql`update prices set unit = case kind when 'image' then 'image' when 'content' then 'tokens' else 'call' end`.execute(
    db,
  );
  // Videos are priced per second of video.
  await sql`update prices set unit = 'second' where kind = 'task' and name like 'video:%'`.execute(db);
  await sql`update prices set cache_read_per_million = input_per_million * cached_ratio
    where kind = 'content' and cached_ratio <> 1`.execute(db);
  for (const column of BUCKET_COLUMNS) {
    await db.schema.alterTable("request_logs").addColumn(column, "bigint").execute();
  }
  await db.schema
    .alterTable("request_logs")
    .addColumn("estimated", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await sql`update prices set cached_ratio = cache_read_per_million / input_per_million
    where kind = 'content' and cache_read_per_million is not null and input_per_million > 0`.execute(db);
  for (const column of [...BUCKET_COLUMNS, "estimated"]) {
    await db.schema.alterTable("request_logs").dropColumn(column).execute();
  }
  for (const column of [...RATE_COLUMNS, "unit"]) {
    await db.schema.alterTable("prices").dropColumn(column).execute();
  }
}
