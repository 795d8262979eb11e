import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/**
 * One recorded moment of a task's life: created, a status move, a channel switch, a failed poll.
 * Rows are written by triggers on `tasks` (migration 012), in the statement that moves the task.
 */
export interface TaskEventsTable {
  id: number;
  /** `tasks.id` (the row id, not the public task id). */
  task_id: number;
  /** Unix seconds. */
  at: number;
  /** `created`, `status`, `channel` or `poll_failed`. */
  event: string;
  detail: string;
}

export interface TaskEvent {
  at: number;
  event: string;
  detail: string;
}

/** A task's history, oldest first (at most TASK_EVENTS_PER_TASK rows are ever kept per task). */
export async function taskHistory(db: Kysely<Database>, taskRowId: number): Promise<TaskEvent[]> {
  const rows = await (db as unknown as Kysely<{ task_events: TaskEventsTable }>)
    .selectFrom("task_events")
    .select(["at", "event", "detail"])
    .where("task_id", "=", taskRowId)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ at: Number(r.at), event: r.event, detail: r.detail }));
}
