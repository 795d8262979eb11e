import { type AnyDb, withId } from "./dialect.js";

/**
 * Client retries and notifications: remembered answers of creating requests (Idempotency-Key),
 * a per-task callback URL, and the outbox of signed webhook deliveries.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("token_id", "bigint", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("response_body", "text")
    .addColumn("locked_until", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["token_id", "key"])
    .execute();
  await db.schema.createIndex("idempotency_keys_expiry_idx").on("idempotency_keys").column("expires_at").execute();

  await db.schema.alterTable("tasks").addColumn("callback_url", "text").execute();

  await withId(db, db.schema.createTable("webhook_deliveries"))
    .addColumn("webhook_id", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("task_id", "text", (c) => c.notNull().unique())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("lease_owner", "text")
    .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("delivered_at", "bigint")
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due_idx")
    .on("webhook_deliveries")
    .columns(["status", "next_attempt_at"])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("webhook_deliveries").ifExists().execute();
  await db.schema.alterTable("tasks").dropColumn("callback_url").execute();
  await db.schema.dropTable("idempotency_keys").ifExists().execute();
}
