import { randomUUID } from "node:crypto";
import { unixNow } from "../core/ids.js";
import type { Executor } from "./ledger.js";

/**
 * Queues the announcement of a task's end. Called in the same transaction as the task's
 * terminal transition, so a delivery is queued exactly once per ended task (a unique key on
 * task_id makes a repeat a no-op). The URL is the task's callback_url, else the user's default
 * webhook; with neither, nothing is queued.
 */
export async function queueTaskEndedWebhook(
  trx: Executor,
  task: { taskId: string; userId: number; status: "SUCCESS" | "FAILURE"; callbackUrl: string | null },
): Promise<boolean> {
  let url = task.callbackUrl;
  if (!url) {
    const user = await trx.selectFrom("users").select("webhook_url").where("id", "=", task.userId).executeTakeFirst();
    url = user?.webhook_url ?? null;
  }
  if (!url) return false;
  const inserted = await trx
    .insertInto("webhook_deliveries")
    .values({
      webhook_id: `msg_${randomUUID().replaceAll("-", "")}`,
      user_id: task.userId,
      task_id: task.taskId,
      url,
      event: task.status === "SUCCESS" ? "task.succeeded" : "task.failed",
      status: "pending",
      next_attempt_at: Date.now(),
      created_at: unixNow(),
    })
    .onConflict((oc) => oc.column("task_id").doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}
