import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** One moment of a task's history, as the console shows it. */
export interface TaskEvent {
  at: number;
  event: string;
  detail: string;
}

/** A task's history, oldest first (at most TASK_EVENTS_PER_TASK rows are ever kept per task). */
export async function taskHistory(db: Kysely<Database>, taskRowId: number): Promise<TaskEvent[]> {
  const rows = await db
    .selectFrom("task_events")
    .select(["at", "event", "detail"])
    .where("task_id", "=", taskRowId)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ at: Number(r.at), event: r.event, detail: r.detail }));
}
