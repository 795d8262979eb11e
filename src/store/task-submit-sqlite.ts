import { GatewayError } from "../core/errors.js";
import { unixNow } from "../core/ids.js";
import type { NewTask } from "../core/tasks/ports.js";
import { sqliteTaskInsert } from "./new-task-row.js";
import type { SqliteConnection, SqliteStatement } from "./sqlite/connection.js";
import type { TaskRow } from "./task-reads.js";

/** The refusal of a submit past the user's limit of unfinished tasks. */
export function unfinishedLimitReached(limit: number): GatewayError {
  return new GatewayError(
    "GW_ERR_RATE_LIMITED",
    `You have ${limit} unfinished tasks, the most allowed at once; submit again when one has ended.`,
    { headers: { "retry-after": "5" } },
  );
}

/**
 * A submit's writes on SQLite as fixed, prepared statements, run synchronously in the store's
 * group commit (see TaskStore): the user's count of unfinished tasks and the task's row, in the
 * transaction that also takes the charge, and later the move to SUBMITTED once it is sent. The
 * same statements as the in-transaction form (the ledger's steps and the insert in TaskStore).
 */
export class SqliteTaskSubmit {
  private readonly countUp: SqliteStatement;
  private readonly countUpWithin: SqliteStatement;
  private readonly insertTask: SqliteStatement;
  private readonly markSentTask: SqliteStatement;

  constructor(readonly db: SqliteConnection) {
    this.countUp = db.prepare("update users set tasks_unfinished = tasks_unfinished + 1 where id = ?");
    this.countUpWithin = db.prepare(
      "update users set tasks_unfinished = tasks_unfinished + 1 where id = ? and tasks_unfinished < ?",
    );
    this.insertTask = db.prepare(`${sqliteTaskInsert.sql} returning *`);
    this.markSentTask = db.prepare(
      `update tasks set status = 'SUBMITTED', upstream_id = ?, channel_id = ?, next_poll_at = ?, updated_at = ?
       where id = ? and status = 'NOT_START'`,
    );
  }

  /** NOT_START -> SUBMITTED with the upstream id; false when the task was no longer NOT_START. */
  markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): boolean {
    return Number(this.markSentTask.run(upstreamId, channelId, nextPollAtMs, unixNow(), id).changes) === 1;
  }

  /** Counts the task against the user's limit (0 = none); throws when the limit is reached. */
  countUnfinished(userId: number, limit: number): void {
    const changed = limit > 0 ? this.countUpWithin.run(userId, limit).changes : this.countUp.run(userId).changes;
    if (Number(changed) !== 1) throw unfinishedLimitReached(limit);
  }

  /** Inserts the task as NOT_START and returns its row. */
  insert(task: NewTask): TaskRow {
    return this.insertTask.get(...sqliteTaskInsert.params(task, unixNow())) as TaskRow;
  }
}
