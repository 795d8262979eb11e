import type { Kysely } from "kysely";
import { unixNow } from "../core/ids.js";
import type { Database } from "./schema.js";
import { ownedTask, type TaskRow } from "./task-reads.js";

/** One page of a user's videos. */
export interface VideoPage {
  rows: TaskRow[];
  hasMore: boolean;
}

/**
 * The reads and marks of videos (tasks of platform `video`) beyond the task engine's: the owner's
 * list by cursor, deletion (hidden from then on), and the stored files that are due for removal.
 */
export class VideoRows {
  constructor(private readonly db: Kysely<Database>) {}

  /** One video of the owner that was not deleted, or undefined (foreign, unknown and deleted look the same). */
  get(userId: number, videoId: string): Promise<TaskRow | undefined> {
    return ownedTask(this.db, userId, videoId)
      .where("platform", "=", "video")
      .where("deleted_at", "=", 0)
      .executeTakeFirst();
  }

  /** A video by its row id, deleted or not. */
  byId(id: number): Promise<TaskRow | undefined> {
    return this.db.selectFrom("tasks").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * A page of the owner's videos in creation order (`desc`: newest first), after the video
   * `after` when given. Null when `after` is not one of the owner's listed videos.
   */
  async list(
    userId: number,
    page: { after?: string; limit: number; order: "asc" | "desc" },
  ): Promise<VideoPage | null> {
    let query = this.db
      .selectFrom("tasks")
      .selectAll()
      .where("platform", "=", "video")
      .where("user_id", "=", userId)
      .where("deleted_at", "=", 0);
    if (page.after !== undefined) {
      const cursor = await this.get(userId, page.after);
      if (!cursor) return null;
      query = query.where("id", page.order === "desc" ? "<" : ">", cursor.id);
    }
    const rows = await query
      .orderBy("id", page.order)
      .limit(page.limit + 1)
      .execute();
    return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
  }

  /** Hides the video from its owner for good; false when it was already deleted. */
  async markDeleted(id: number): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({ deleted_at: unixNow() })
      .where("id", "=", id)
      .where("deleted_at", "=", 0)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * Completed videos whose stored files must go: deleted ones, and those that finished at or
   * before `finishedBy` (unix seconds: the end of their retention).
   */
  filesDue(finishedBy: number, limit: number): Promise<TaskRow[]> {
    return this.db
      .selectFrom("tasks")
      .selectAll()
      .where("platform", "=", "video")
      .where("status", "=", "SUCCESS")
      .where("files_removed_at", "=", 0)
      .where((eb) => eb.or([eb("deleted_at", ">", 0), eb("finish_time", "<=", finishedBy)]))
      .orderBy("id")
      .limit(limit)
      .execute();
  }

  /** Records that the video's stored files are gone. */
  async markFilesRemoved(id: number): Promise<void> {
    await this.db
      .updateTable("tasks")
      .set({ files_removed_at: unixNow() })
      .where("id", "=", id)
      .where("files_removed_at", "=", 0)
      .execute();
  }
}
