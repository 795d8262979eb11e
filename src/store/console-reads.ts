import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Database } from "./schema.js";

/** Filters of a user's own task list; newest first, `after` is the last id of the previous page. */
export interface OwnTaskFilter {
  platform?: string;
  status?: string;
  after?: number;
  limit: number;
}

/** What the console's user pages read: their own tasks and their spend over time. */
export class ConsoleReads {
  constructor(private readonly db: Kysely<Database>) {}

  ownTasks(userId: number, f: OwnTaskFilter) {
    let q = this.db.selectFrom("tasks").selectAll().where("user_id", "=", userId);
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
      .executeTakeFirst();
  }

  /**
   * The user's spend (quota of their request log rows) since `since`, summed per bucket of
   * `bucketSeconds` and per model.
   */
  async spend(
    userId: number,
    since: number,
    bucketSeconds: number,
  ): Promise<{ start: number; model: string; spend: number }[]> {
    // A literal, not a parameter: PostgreSQL matches the grouped expression to the selected one
    // only when both are the same text, and two parameters are two different texts.
    const bucket = sql<number>`created_at - (created_at % ${sql.lit(Math.trunc(bucketSeconds))})`;
    const rows = await this.db
      .selectFrom("request_logs")
      .select([bucket.as("start"), "model", (eb) => eb.fn.sum<number>("quota").as("spend")])
      .where("user_id", "=", userId)
      .where("created_at", ">=", since)
      .groupBy([bucket, "model"])
      .execute();
    return rows.map((r) => ({ start: Number(r.start), model: r.model, spend: Number(r.spend) }));
  }
}
