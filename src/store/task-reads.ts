import type { Kysely, Selectable } from "kysely";
import type { TaskReadPort } from "../core/tasks/ports.js";
import type { OwnedClip } from "../core/tasks/source-clip.js";
import type { Database, TasksTable } from "./schema.js";

/** A task's row as the store reads it. */
export type TaskRow = Selectable<TasksTable>;

/**
 * The task `taskId` if `userId` owns it: a task of someone else is not found, as an unknown one
 * (the caller narrows it further, to a family or to what was not deleted).
 */
export function ownedTask(db: Kysely<Database>, userId: number, taskId: string) {
  return db.selectFrom("tasks").selectAll().where("task_id", "=", taskId).where("user_id", "=", userId);
}

/** What is read of tasks: the owner's records and the clips of their succeeded tasks. */
export class TaskReads implements TaskReadPort<TaskRow> {
  constructor(private readonly db: Kysely<Database>) {}

  /** One task of the owner, or undefined (foreign and unknown ids look the same). */
  getOwned(platform: string, userId: number, taskId: string): Promise<TaskRow | undefined> {
    return ownedTask(this.db, userId, taskId).where("platform", "=", platform).executeTakeFirst();
  }

  /** One task of the owner in any family, or undefined (what a webhook announces). */
  findOwned(userId: number, taskId: string): Promise<TaskRow | undefined> {
    return ownedTask(this.db, userId, taskId).executeTakeFirst();
  }

  /** The owner's tasks among `taskIds`; others are simply absent. */
  async listOwned(platform: string, userId: number, taskIds: string[]): Promise<TaskRow[]> {
    if (taskIds.length === 0) return [];
    // Looked up by the unique task_id alone, owner checked on the rows found: with the owner in
    // the WHERE, SQLite walks the owner's index and reads every task the owner ever had.
    const rows = await this.db.selectFrom("tasks").selectAll().where("task_id", "in", taskIds).execute();
    return rows.filter((r) => Number(r.user_id) === userId && r.platform === platform);
  }

  /**
   * A clip of one of the owner's succeeded tasks of `platform`: the model that made it, that
   * task's action and upstream id, and the clip's audio URL as the record shows it.
   */
  async findOwnedClip(platform: string, userId: number, clipId: string): Promise<OwnedClip | undefined> {
    const row = await this.db
      .selectFrom("task_clips")
      .innerJoin("tasks", "tasks.task_id", "task_clips.task_id")
      .select([
        "task_clips.model as model",
        "tasks.action as action",
        "tasks.upstream_id as upstream_id",
        "tasks.data as data",
      ])
      .where("task_clips.user_id", "=", userId)
      .where("task_clips.clip_id", "=", clipId)
      .where("task_clips.platform", "=", platform)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      model: row.model,
      action: row.action,
      upstreamTaskId: row.upstream_id,
      audioUrl: audioUrlOf(row.data, clipId),
    };
  }
}

/** The audio URL of one clip in a succeeded task's `data` (`{clips: [...]}`); empty when none. */
function audioUrlOf(data: string, clipId: string): string {
  try {
    const clips: unknown = JSON.parse(data)?.clips;
    if (!Array.isArray(clips)) return "";
    const clip = clips.find((c) => c && typeof c === "object" && c.clip_id === clipId);
    return typeof clip?.audio_url === "string" ? clip.audio_url : "";
  } catch {
    return "";
  }
}
