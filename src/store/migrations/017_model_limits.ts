import type { AnyDb } from "./dialect.js";

/**
 * Operators' rate limits (requests and tokens per minute) of a token, a user or a model, and the
 * defaults of a group: one row per (scope, subject, group). `subject` is the token's or user's id
 * or the model's name; it is '' for a group's default of tokens or users. `group_name` is '' for a
 * limit of a subject itself. A null limit is no limit.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable("rate_limits")
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("group_name", "text", (c) => c.notNull())
    .addColumn("requests_per_minute", "bigint")
    .addColumn("tokens_per_minute", "bigint")
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("rate_limits_pk", ["scope", "subject", "group_name"])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("rate_limits").ifExists().execute();
}
