import { sql } from "kysely";
import type { AnyDb } from "./dialect.js";
import { withId } from "./dialect.js";

/**
 * Key pools and channel tags:
 * - `channel_keys`: the upstream keys of each channel, one row a key. A key is enabled or
 *   disabled by the operator, and live or dead (`dead_at` set) by what the upstream answered;
 *   a dead key is probed again at `next_probe_at`. Its calls and failures are counted here so
 *   every instance and the console see them. Each channel's existing key becomes its first row.
 * - `channels.key_rotation`: how calls spread over the live keys (`round_robin` or `random`);
 * - `channels.tags`: a JSON list of words the operator acts on channels by.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable("channel_keys"))
    .addColumn("channel_id", "bigint", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("dead_reason", "text")
    .addColumn("dead_at", "bigint")
    .addColumn("next_probe_at", "bigint")
    .addColumn("probe_failures", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("calls", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("failures", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("last_error_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("channel_keys_channel").on("channel_keys").columns(["channel_id", "id"]).execute();
  await db.schema
    .createIndex("channel_keys_channel_key")
    .unique()
    .on("channel_keys")
    .columns(["channel_id", "key"])
    .execute();
  await db.schema.createIndex("channel_keys_probe").on("channel_keys").column("next_probe_at").execute();
  await db.schema
    .alterTable("channels")
    .addColumn("key_rotation", "text", (c) => c.notNull().defaultTo("round_robin"))
    .execute();
  await db.schema
    .alterTable("channels")
    .addColumn("tags", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
  await sql`insert into channel_keys (channel_id, key, enabled, created_at)
    select id, key, 1, created_at from channels where key <> ''`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("channel_keys").execute();
  await db.schema.alterTable("channels").dropColumn("key_rotation").execute();
  await db.schema.alterTable("channels").dropColumn("tags").execute();
}
