import type { AnyDb } from "./dialect.js";
import { withId } from "./dialect.js";

/**
 * Redemption codes (docs/redemption-codes.md):
 * - `redemption_batches`: what an operator generated at once: the quota each code credits, the
 *   expiry, the name prefix, the limit per user, whether it is enabled, when it was exported;
 * - `redemption_codes`: one row per code, found by the SHA-256 of the code (`code_hash`, unique);
 *   `shown` keeps only its start and end for lists; `plain` holds the full code until the batch's
 *   one export, which empties it; a code moves from `unused` to `used` (by whom, when) once;
 * - `redemption_user_counts`: codes of a batch each user redeemed, raised by a conditional upsert
 *   in the redemption's transaction, so the limit per user holds under concurrent redeems.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable("redemption_batches"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("quota", "bigint", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addColumn("per_user_limit", "integer")
    .addColumn("expires_at", "bigint")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("note", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("exported_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable("redemption_codes"))
    .addColumn("batch_id", "bigint", (c) => c.notNull())
    .addColumn("code_hash", "text", (c) => c.notNull().unique())
    .addColumn("shown", "text", (c) => c.notNull())
    .addColumn("plain", "text")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("unused"))
    .addColumn("user_id", "bigint")
    .addColumn("redeemed_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("redemption_codes_batch").on("redemption_codes").columns(["batch_id", "id"]).execute();

  await db.schema
    .createTable("redemption_user_counts")
    .addColumn("batch_id", "bigint", (c) => c.notNull())
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("used", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("redemption_user_counts_pk", ["batch_id", "user_id"])
    .execute();
}
