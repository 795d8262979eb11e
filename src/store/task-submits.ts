import { type Kysely, sql, type Updateable } from "kysely";
import { unixNow } from "../core/ids.js";
import type { NewTask, TaskSubmitPort } from "../core/tasks/ports.js";
import type { Ledger } from "./ledger.js";
import { newTaskValues } from "./new-task-row.js";
import { submitTask } from "./postgres/task-submit.js";
import type { Database, TasksTable } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import { countFinished, failTask, taskReference } from "./task-ends.js";
import type { TaskRow } from "./task-reads.js";
import { SqliteTaskSubmit, unfinishedLimitReached } from "./task-submit-sqlite.js";

/**
 * The submit's writes of tasks: the charged insert, the moves of a task not yet sent (failover,
 * its file brought in, taken back), its send (NOT_START -> SUBMITTED) and its end when the send
 * fails. Every status move is a compare-and-set (`... WHERE status = old`); the charge commits
 * with the insert, a refund with the move that ends the task.
 */
export class TaskSubmits implements TaskSubmitPort<TaskRow> {
  /** The submit's prepared statements on SQLite, made on first use. */
  private sqliteSubmit?: SqliteTaskSubmit;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: Ledger,
  ) {}

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
        return trx.insertInto("tasks").values(newTaskValues(task, unixNow())).returningAll().executeTakeFirstOrThrow();
      },
    });
  }

  /** The submit's prepared statements on this SQLite connection (made on first use). */
  private submitStatements(db: SqliteConnection): SqliteTaskSubmit {
    if (this.sqliteSubmit?.db !== db) this.sqliteSubmit = new SqliteTaskSubmit(db);
    return this.sqliteSubmit;
  }

  /** Moves the not-yet-sent task to another channel during failover (price unchanged). */
  switchChannel(id: number, channelId: number, properties: string): Promise<boolean> {
    return this.changeUnsent(id, { channel_id: channelId, properties });
  }

  /** The body of a task not yet sent, once its file is brought in. False when it is no longer NOT_START. */
  recordBody(id: number, requestBody: string): Promise<boolean> {
    return this.changeUnsent(id, { request_body: requestBody });
  }

  /** Changes a task still NOT_START; false when it is no longer (the sweeper ended it). */
  private async changeUnsent(id: number, changes: Updateable<TasksTable>): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({ ...changes, updated_at: unixNow() })
      .where("id", "=", id)
      .where("status", "=", "NOT_START")
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * NOT_START -> SUBMITTED with the upstream id. False when the task was already failed (swept).
   * On SQLite a prepared statement in the store's group commit (the sends of one turn share a
   * commit).
   */
  markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): Promise<boolean> {
    return this.ledger.inCommit(
      (db) => this.submitStatements(db).markSent(id, upstreamId, channelId, nextPollAtMs),
      async () => {
        const res = await this.db
          .updateTable("tasks")
          .set({
            status: "SUBMITTED",
            upstream_id: upstreamId,
            channel_id: channelId,
            next_poll_at: nextPollAtMs,
            updated_at: unixNow(),
          })
          .where("id", "=", id)
          .where("status", "=", "NOT_START")
          .executeTakeFirst();
        return Number(res.numUpdatedRows) === 1;
      },
    );
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
      await trx.deleteFrom("task_events").where("task_id", "=", id).execute();
      await countFinished(trx, Number(row.user_id));
      await this.ledger.refundIn(trx, taskReference(row.task_id), reason.slice(0, 200));
      return true;
    });
  }

  /** A send that failed ends the task still NOT_START: FAILURE with its refund (see failTask). */
  fail(id: number, from: string, reason: string, upstreamStatus?: string | null): Promise<boolean> {
    return failTask(this.ledger, id, from, reason, upstreamStatus);
  }
}
