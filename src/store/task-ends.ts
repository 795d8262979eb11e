import { sql } from "kysely";
import { unixNow } from "../core/ids.js";
import type { Executor, Ledger } from "./ledger.js";
import { queueTaskEndedWebhook } from "./task-webhook-outbox.js";

/** The ledger reference of a task's charge and refund. */
export function taskReference(taskId: string): string {
  return `task:${taskId}`;
}

/** One unfinished task fewer for the user: in the transaction of the task's terminal move. */
export async function countFinished(trx: Executor, userId: number): Promise<void> {
  await trx
    .updateTable("users")
    .set({ tasks_unfinished: sql`tasks_unfinished - 1` })
    .where("id", "=", userId)
    .where("tasks_unfinished", ">", 0)
    .execute();
}

/**
 * Moves a task to FAILURE and refunds its charge, in one transaction, only if it is still in
 * `from`; the webhook announcing the end is queued in that transaction too. True when this
 * call failed it (and so refunded it). Both the submit (a send that failed) and the workers (a
 * poll's verdict, the sweeper, the reaper) end tasks this way.
 */
export function failTask(
  ledger: Ledger,
  id: number,
  from: string,
  reason: string,
  upstreamStatus?: string | null,
): Promise<boolean> {
  return ledger.transaction(async (trx) => {
    const now = unixNow();
    const row = await trx
      .updateTable("tasks")
      .set({
        status: "FAILURE",
        fail_reason: reason.slice(0, 1000) || "the task failed",
        progress: "100%",
        finish_time: now,
        result_url: null,
        data: "{}",
        lease_owner: null,
        lease_until: 0,
        updated_at: now,
        ...(upstreamStatus === undefined ? {} : { upstream_status: upstreamStatus }),
      })
      .where("id", "=", id)
      .where("status", "=", from)
      .returning(["task_id", "user_id", "callback_url"])
      .executeTakeFirst();
    if (!row) return false;
    await countFinished(trx, Number(row.user_id));
    await ledger.refundIn(trx, taskReference(row.task_id), reason.slice(0, 200));
    await queueTaskEndedWebhook(trx, {
      taskId: row.task_id,
      userId: Number(row.user_id),
      status: "FAILURE",
      callbackUrl: row.callback_url,
    });
    return true;
  });
}
