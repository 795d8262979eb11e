import { sql } from "kysely";
import { type AnyDb, withId } from "./dialect.js";

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable("users"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("group", "text", (c) => c.notNull().defaultTo("default"))
    .addColumn("quota", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("used_quota", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("webhook_url", "text")
    .addColumn("webhook_secret", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable("tokens"))
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("key_prefix", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("expires_at", "bigint")
    .addColumn("quota_limit", "bigint")
    .addColumn("used_quota", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("models", "text")
    .addColumn("ip_allow", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tokens_user_idx").on("tokens").column("user_id").execute();

  await withId(db, db.schema.createTable("channels"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("base_url", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("models", "text", (c) => c.notNull())
    .addColumn("model_mapping", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("groups", "text", (c) => c.notNull().defaultTo('["default"]'))
    .addColumn("priority", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("weight", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("price_ratio", "double precision", (c) => c.notNull().defaultTo(1))
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("status_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("failure_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("last_error_at", "bigint")
    .addColumn("last_success_at", "bigint")
    .addColumn("success_count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("request_count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable("ledger"))
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id"))
    .addColumn("token_id", "bigint")
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("amount", "bigint", (c) => c.notNull())
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("note", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("ledger_reference_kind_unique", ["reference", "kind"])
    .execute();
  await db.schema.createIndex("ledger_user_idx").on("ledger").columns(["user_id", "id"]).execute();

  await withId(db, db.schema.createTable("tasks"))
    .addColumn("task_id", "text", (c) => c.notNull().unique())
    .addColumn("platform", "text", (c) => c.notNull())
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id"))
    .addColumn("token_id", "bigint")
    .addColumn("group", "text", (c) => c.notNull())
    .addColumn("channel_id", "bigint", (c) => c.notNull())
    .addColumn("quota", "bigint", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("fail_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("result_url", "text")
    .addColumn("submit_time", "bigint", (c) => c.notNull())
    .addColumn("start_time", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("finish_time", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("progress", "text", (c) => c.notNull().defaultTo("0%"))
    .addColumn("properties", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("data", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("request_body", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("upstream_id", "text")
    .addColumn("upstream_status", "text")
    .addColumn("next_poll_at", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("lease_owner", "text")
    .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("poll_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("callback_secret", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tasks_user_idx").on("tasks").columns(["user_id", "id"]).execute();
  await db.schema.createIndex("tasks_due_idx").on("tasks").columns(["status", "next_poll_at"]).execute();

  await withId(db, db.schema.createTable("request_logs"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("request_id", "text", (c) => c.notNull())
    .addColumn("user_id", "bigint")
    .addColumn("token_id", "bigint")
    .addColumn("channel_id", "bigint")
    .addColumn("surface", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("prompt_tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("completion_tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("cached_tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("quota", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("latency_ms", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .execute();
  await db.schema.createIndex("request_logs_user_idx").on("request_logs").columns(["user_id", "id"]).execute();

  await db.schema
    .createTable("prices")
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("price", "double precision", (c) => c.notNull().defaultTo(0))
    .addColumn("input_per_million", "double precision", (c) => c.notNull().defaultTo(0))
    .addColumn("output_per_million", "double precision", (c) => c.notNull().defaultTo(0))
    .addColumn("cached_ratio", "double precision", (c) => c.notNull().defaultTo(1))
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("prices_pk", ["kind", "name"])
    .execute();

  await db.schema
    .createTable("group_ratios")
    .addColumn("group", "text", (c) => c.primaryKey())
    .addColumn("ratio", "double precision", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await sql`insert into group_ratios ("group", ratio, updated_at) values ('default', 1, 0)`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  for (const t of [
    "settings",
    "group_ratios",
    "prices",
    "request_logs",
    "tasks",
    "ledger",
    "channels",
    "tokens",
    "users",
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
