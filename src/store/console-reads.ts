import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** Filters of a user's own task list; newest first, `after` is the last id of the previous page. */
export interface OwnTaskFilter {
  platform?: string;
  status?: string;
  after?: number;
  limit: number;
}

/**
 * What the console's user pages read: their own tasks and their spend over time. A video its
 * owner deleted is gone for the owner here as in the Videos API (the operator still sees it).
 */
export class ConsoleReads {
  constructor(private readonly db: Kysely<Database>) {}

  ownTasks(userId: number, f: OwnTaskFilter) {
    let q = this.db.selectFrom("tasks").selectAll().where("user_id", "=", userId).where("deleted_at", "=", 0);
    if (f.platform !== undefined) q = q.where("platform", "=", f.platform);
    if (f.status !== undefined) q = q.where("status", "=", f.status);
    if (f.after !== undefined) q = q.where("id", "<", f.after);
    return q.orderBy("id", "desc").limit(f.limit).execute();
  }

  /** One task of the user by its public id; another user's task is not found. */
  ownTask(userId: number, taskId: string) {
    return this.db
      .selectFrom("tasks")
      .selectAll()
      .where("task_id", "=", taskId)
      .where("user_id", "=", userId)
      .where("deleted_at", "=", 0)
      .executeTakeFirst();
  }

  /**
   * The user's spend (quota of their request-log rows) per day since the day starting at `since`
   * (unix seconds of a UTC day's start) and per model, from the daily usage totals: the request
   * log's retention does not shorten it.
   */
  async spend(userId: number, since: number): Promise<{ start: number; model: string; spend: number }[]> {
    const rows = await this.db
      .selectFrom("usage_daily")
      .select(["day", "model", (eb) => eb.fn.sum<number>("quota").as("spend")])
      .where("user_id", "=", userId)
      .where("day", ">=", since)
      .groupBy(["day", "model"])
      .execute();
    return rows.map((r) => ({ start: Number(r.day), model: r.model, spend: Number(r.spend) }));
  }
}
