import type { AnyDb } from "./dialect.js";
import { withId } from "./dialect.js";

/**
 * The console's accounts and sessions:
 * - `operators`: people who run the gateway from the console (name unique, scrypt hash);
 * - users gain an optional login: `email` (unique where set, kept lower-case) and a password hash;
 * - `console_sessions`: one row per signed-in browser; the cookie holds a random id, the row only
 *   its SHA-256, with the session's CSRF token and its idle and absolute expiry;
 * - `console_invites`: one-time links to set a user's password (only the token's hash is kept);
 * - `user_images`: the images a user generated and was given as a stored URL, newest first.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable("operators"))
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema.alterTable("users").addColumn("email", "text").execute();
  await db.schema.alterTable("users").addColumn("password_hash", "text").execute();
  await db.schema.createIndex("users_email").unique().on("users").column("email").execute();

  await db.schema
    .createTable("console_sessions")
    .addColumn("id_hash", "text", (c) => c.primaryKey())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("subject_id", "bigint", (c) => c.notNull())
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_seen_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("console_sessions_subject")
    .on("console_sessions")
    .columns(["role", "subject_id"])
    .execute();
  await db.schema.createIndex("console_sessions_expires").on("console_sessions").column("expires_at").execute();

  await db.schema
    .createTable("console_invites")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .execute();
  await db.schema.createIndex("console_invites_user").on("console_invites").column("user_id").execute();

  await withId(db, db.schema.createTable("user_images"))
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("user_images_user").on("user_images").columns(["user_id", "id"]).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("user_images").execute();
  await db.schema.dropTable("console_invites").execute();
  await db.schema.dropTable("console_sessions").execute();
  await db.schema.dropIndex("users_email").execute();
  await db.schema.alterTable("users").dropColumn("password_hash").execute();
  await db.schema.alterTable("users").dropColumn("email").execute();
  await db.schema.dropTable("operators").execute();
}
