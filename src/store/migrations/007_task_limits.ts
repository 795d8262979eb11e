import type { AnyDb } from "./dialect.js";

/** Counting a user's unfinished tasks (the in-flight limit) by index rather than by scan. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.createIndex("tasks_user_status_idx").on("tasks").columns(["user_id", "status"]).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex("tasks_user_status_idx").ifExists().execute();
}
