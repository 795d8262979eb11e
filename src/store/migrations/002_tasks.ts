import type { AnyDb } from "./dialect.js";

// Audio tasks: a per-task error counter for poll backoff, a lookup for callback secrets, and an
// index of the clips of succeeded tasks (REPLACE and INSTRUMENTALS_SWAP name a clip the caller owns).
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("tasks")
    .addColumn("poll_errors", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("tasks_callback_idx").on("tasks").column("callback_secret").execute();

  await db.schema
    .createTable("task_clips")
    .addColumn("clip_id", "text", (c) => c.notNull())
    .addColumn("task_id", "text", (c) => c.notNull())
    .addColumn("user_id", "bigint", (c) => c.notNull())
    .addColumn("platform", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("task_clips_pk", ["clip_id", "task_id"])
    .execute();
  await db.schema.createIndex("task_clips_user_idx").on("task_clips").columns(["user_id", "clip_id"]).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable("task_clips").ifExists().execute();
  await db.schema.dropIndex("tasks_callback_idx").ifExists().execute();
  await db.schema.alterTable("tasks").dropColumn("poll_errors").execute();
}
