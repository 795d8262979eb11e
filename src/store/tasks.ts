import { type Kysely, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import { type Clip, resultUrlOf } from "../core/tasks/clips.js";
import type { NewTask, StoredTask, TaskStorePort } from "../core/tasks/ports.js";
import type { Ledger } from "./ledger.js";
import { submitTask } from "./postgres/task-submit.js";
import type { Database } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import type { TaskEventsTable } from "./task-events.js";
import { TaskPolls } from "./task-polls.js";
import type { TaskDb, TaskRow } from "./task-reads.js";
import { SqliteTaskSubmit, unfinishedLimitReached } from "./task-submit-sqlite.js";
import { queueTaskEndedWebhook } from "./task-webhook-outbox.js";

export type { NewTask, TaskChanges } from "../core/tasks/ports.js";
export type { TaskRow } from "./task-reads.js";

type TaskEventsDb = { task_events: TaskEventsTable };

/** The ledger reference of a task's charge and refund. */
export function taskReference(taskId: string): string {
  return `task:${taskId}`;
}

/**
 * The task repository. Every status move is a compare-and-set (`... WHERE status = old`): of two
 * workers racing on one task only one moves it. FAILURE commits with its refund, and the first
 * charge commits with the insert. This file holds the moves that touch money; reads and the
 * non-terminal moves are in task-reads.ts and task-polls.ts.
 */
export class TaskStore extends TaskPolls implements TaskStorePort<TaskRow> {
  /** The submit's prepared statements on SQLite, made on first use. */
  private sqliteSubmit?: SqliteTaskSubmit;

  constructor(
    db: Kysely<Database>,
    private readonly ledger: Ledger,
    dialect: "sqlite" | "postgres",
  ) {
    super(db, dialect);
  }

  /**
   * Charges the caller and inserts the task as NOT_START, in one transaction. The user's count of
   * unfinished tasks goes up in the same transaction by one conditional update of the user's row
   * (refused at `unfinishedLimit`), so parallel submits can never pass the limit together.
   */
  async insertCharged(task: NewTask): Promise<TaskRow> {
    const limit = task.unfinishedLimit ?? 0;
    const charge = {
      userId: task.userId,
      tokenId: task.tokenId,
      amount: task.quota,
      reference: taskReference(task.taskId),
      note: `${task.platform} ${task.action}`,
      closeBy: task.chargeCloseBy,
    };
    // SQLite: fixed prepared statements in one synchronous transaction of the store's group commit.
    // PostgreSQL: the whole submit in one statement; when it is refused, having written nothing,
    // the transaction of single statements runs it again and says which part was refused.
    return this.ledger.chargeWith(charge, {
      synchronous: (db, hold) => {
        const statements = this.submitStatements(db);
        statements.countUnfinished(task.userId, limit);
        hold();
        return statements.insert(task);
      },
      oneStatement: (opening, meta) => submitTask(this.db, task, opening, meta, limit, unixNow()),
      inTransaction: async (trx, hold) => {
        let counted = trx
          .updateTable("users")
          .set({ tasks_unfinished: sql`tasks_unfinished + 1` })
          .where("id", "=", task.userId);
        if (limit > 0) counted = counted.where("tasks_unfinished", "<", limit);
        const counter = await counted.executeTakeFirst();
        if (Number(counter.numUpdatedRows) !== 1) throw unfinishedLimitReached(limit);
        await hold();
        const now = unixNow();
        return trx
          .insertInto("tasks")
          .values({
            task_id: task.taskId,
            platform: task.platform,
            user_id: task.userId,
            token_id: task.tokenId,
            group: task.group,
            channel_id: task.channelId,
            quota: task.quota,
            action: task.action,
            status: "NOT_START",
            fail_reason: "",
            result_url: null,
            submit_time: now,
            start_time: 0,
            finish_time: 0,
            progress: "0%",
            properties: task.properties,
            data: "{}",
            request_body: task.requestBody,
            upstream_id: null,
            upstream_status: null,
            next_poll_at: task.sendDeadlineMs,
            lease_owner: null,
            lease_until: 0,
            callback_secret: task.callbackSecret,
            callback_url: task.callbackUrl ?? null,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      },
    });
  }

  /** The submit's prepared statements on this SQLite connection (made on first use). */
  private submitStatements(db: SqliteConnection): SqliteTaskSubmit {
    if (this.sqliteSubmit?.db !== db) this.sqliteSubmit = new SqliteTaskSubmit(db);
    return this.sqliteSubmit;
  }

  /**
   * NOT_START -> SUBMITTED with the upstream id. False when the task was already failed (swept).
   * On SQLite a prepared statement in the store's group commit (the sends of one turn share a
   * commit).
   */
  override markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): Promise<boolean> {
    return this.ledger.inCommit(
      (db) => this.submitStatements(db).markSent(id, upstreamId, channelId, nextPollAtMs),
      () => super.markSent(id, upstreamId, channelId, nextPollAtMs),
    );
  }

  /**
   * Moves a task to FAILURE and refunds its charge, in one transaction, only if it is still in
   * `from`; the webhook announcing the end is queued in that transaction too. True when this
   * call failed it (and so refunded it).
   */
  async fail(id: number, from: string, reason: string, upstreamStatus?: string | null): Promise<boolean> {
    return this.ledger.transaction(async (trx) => {
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
      await this.countFinished(trx, Number(row.user_id));
      await this.ledger.refundIn(trx, taskReference(row.task_id), reason.slice(0, 200));
      await queueTaskEndedWebhook(trx, {
        taskId: row.task_id,
        userId: Number(row.user_id),
        status: "FAILURE",
        callbackUrl: row.callback_url,
      });
      return true;
    });
  }

  /**
   * Takes back a task still NOT_START whose submit was answered with an error after its hold: the
   * row and its history go, the charge is refunded and the user's count of unfinished tasks goes
   * down, in one transaction; the ledger keeps the hold and its refund under the task's reference.
   * No webhook: the client had the error as its answer. False when the task was no longer
   * NOT_START (the sweeper ended it, and refunded it, first).
   */
  async withdraw(id: number, reason: string): Promise<boolean> {
    return this.ledger.transaction(async (trx) => {
      const row = await trx
        .deleteFrom("tasks")
        .where("id", "=", id)
        .where("status", "=", "NOT_START")
        .returning(["task_id", "user_id"])
        .executeTakeFirst();
      if (!row) return false;
      await (trx as unknown as Transaction<TaskEventsDb>).deleteFrom("task_events").where("task_id", "=", id).execute();
      await this.countFinished(trx, Number(row.user_id));
      await this.ledger.refundIn(trx, taskReference(row.task_id), reason.slice(0, 200));
      return true;
    });
  }

  /**
   * Moves a task to SUCCESS with its clips, only if it is still in `from` and its owner has not
   * deleted it (a deleted one ends by `succeedDeleted`, keeping no results); its charge is settled
   * and the webhook announcing the end is queued in the same transaction.
   */
  async succeed(
    task: StoredTask,
    from: string,
    clips: Clip[],
    upstreamStatus: string,
    model: string,
  ): Promise<boolean> {
    return this.ledger.transaction(async (trx) => {
      const now = unixNow();
      const first = clips[0];
      const res = await trx
        .updateTable("tasks")
        .set({
          status: "SUCCESS",
          progress: "100%",
          fail_reason: "",
          finish_time: now,
          start_time: Number(task.start_time) || now,
          result_url: resultUrlOf(first),
          data: JSON.stringify({ clips }),
          upstream_status: upstreamStatus,
          lease_owner: null,
          lease_until: 0,
          poll_errors: 0,
          updated_at: now,
        })
        .where("id", "=", task.id)
        .where("status", "=", from)
        .where("deleted_at", "=", 0)
        .returning(["callback_url"])
        .executeTakeFirst();
      if (!res) return false;
      await this.closeSold(trx, task, res.callback_url, "task succeeded");
      await this.indexClips(trx, task, clips, model, now);
      return true;
    });
  }

  /**
   * Moves a task its owner deleted while it ran (a video) to SUCCESS with no results, only if it
   * is still in `from`: the upstream made it and bills it, so its charge is settled, but nothing
   * of it is stored or shown. The webhook announcing the end is queued as for any success.
   */
  async succeedDeleted(task: StoredTask, from: string, upstreamStatus: string): Promise<boolean> {
    return this.ledger.transaction(async (trx) => {
      const now = unixNow();
      const res = await trx
        .updateTable("tasks")
        .set({
          status: "SUCCESS",
          progress: "100%",
          fail_reason: "",
          finish_time: now,
          start_time: Number(task.start_time) || now,
          result_url: null,
          data: "{}",
          upstream_status: upstreamStatus,
          files_removed_at: now,
          lease_owner: null,
          lease_until: 0,
          poll_errors: 0,
          updated_at: now,
        })
        .where("id", "=", task.id)
        .where("status", "=", from)
        .where("deleted_at", ">", 0)
        .returning(["callback_url"])
        .executeTakeFirst();
      if (!res) return false;
      await this.closeSold(trx, task, res.callback_url, "task succeeded after its owner deleted it");
      return true;
    });
  }

  /** A sale's closing, in its SUCCESS transaction: counted finished, settled, announced. */
  private async closeSold(trx: Transaction<Database>, task: StoredTask, callbackUrl: string | null, note: string) {
    await this.countFinished(trx, Number(task.user_id));
    // A sale closes its charge explicitly: open always means unfinished.
    await this.ledger.settleIn(trx, taskReference(task.task_id), Number(task.quota), note);
    await queueTaskEndedWebhook(trx, {
      taskId: task.task_id,
      userId: Number(task.user_id),
      status: "SUCCESS",
      callbackUrl,
    });
  }

  /** One unfinished task fewer for the user: in the transaction of the task's terminal move. */
  private async countFinished(trx: Transaction<Database>, userId: number): Promise<void> {
    await trx
      .updateTable("users")
      .set({ tasks_unfinished: sql`tasks_unfinished - 1` })
      .where("id", "=", userId)
      .where("tasks_unfinished", ">", 0)
      .execute();
  }

  private async indexClips(trx: Transaction<Database>, task: StoredTask, clips: Clip[], model: string, now: number) {
    const seen = new Set<string>();
    const rows = clips
      .filter((c) => !seen.has(c.clip_id) && seen.add(c.clip_id))
      .map((c) => ({
        clip_id: c.clip_id,
        task_id: task.task_id,
        user_id: Number(task.user_id),
        platform: task.platform,
        model: "mv" in c ? c.mv || model : model,
        created_at: now,
      }));
    if (rows.length === 0) return;
    await (trx as unknown as Transaction<TaskDb>)
      .insertInto("task_clips")
      .values(rows)
      .onConflict((oc) => oc.columns(["clip_id", "task_id"]).doNothing())
      .execute();
  }
}
