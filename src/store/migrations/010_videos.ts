import type { AnyDb } from "./dialect.js";

/**
 * Videos are tasks of platform `video`, listed per user newest first and hidden once deleted:
 * - `deleted_at`: when the owner deleted the video (unix seconds; 0 = not deleted);
 * - `files_removed_at`: when its stored files (video, thumbnail, spritesheet) were removed, by a
 *   delete or at the end of its retention (0 = still stored);
 * - an index for one user's tasks of one platform in id order (the list's pages).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable("tasks")
    .addColumn("deleted_at", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("tasks")
    .addColumn("files_removed_at", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("tasks_platform_user_id").on("tasks").columns(["platform", "user_id", "id"]).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex("tasks_platform_user_id").execute();
  await db.schema.alterTable("tasks").dropColumn("files_removed_at").execute();
  await db.schema.alterTable("tasks").dropColumn("deleted_at").execute();
}
