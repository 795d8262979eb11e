import { type Kysely, sql } from "kysely";
import { unixNow } from "../core/ids.js";
import type { TaskChanges } from "../core/tasks/ports.js";
import { POLLED_STATUSES, type TaskStatus } from "../core/tasks/states.js";
import type { Database } from "./schema.js";
import { TaskReads, type TaskRow } from "./task-reads.js";

/**
 * The non-terminal moves of tasks: the send (NOT_START -> SUBMITTED), leased claims of due tasks
 * and their release. Every status move is a compare-and-set (`... WHERE status = old`).
 */
export class TaskPolls extends TaskReads {
  constructor(
    db: Kysely<Database>,
    protected readonly dialect: "sqlite" | "postgres",
  ) {
    super(db);
  }

  /** Moves the not-yet-sent task to another channel during failover (price unchanged). */
  async switchChannel(id: number, channelId: number, properties: string): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({ channel_id: channelId, properties, updated_at: unixNow() })
      .where("id", "=", id)
      .where("status", "=", "NOT_START")
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** The body of a task not yet sent, once its file is brought in. False when it is no longer NOT_START. */
  async recordBody(id: number, requestBody: string): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({ request_body: requestBody, updated_at: unixNow() })
      .where("id", "=", id)
      .where("status", "=", "NOT_START")
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** NOT_START -> SUBMITTED with the upstream id. False when the task was already failed (swept). */
  async markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): Promise<boolean> {
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
  }

  /** A non-terminal move (or a progress change) that also releases the lease. */
  async advance(id: number, from: string, to: TaskStatus, changes: TaskChanges): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({
        status: to,
        ...(changes.progress === undefined ? {} : { progress: changes.progress }),
        ...(changes.upstreamStatus === undefined ? {} : { upstream_status: changes.upstreamStatus }),
        ...(changes.startTime === undefined ? {} : { start_time: changes.startTime }),
        ...(changes.nextPollAt === undefined ? {} : { next_poll_at: changes.nextPollAt }),
        lease_owner: null,
        lease_until: 0,
        poll_errors: 0,
        poll_count: sql`poll_count + 1`,
        updated_at: unixNow(),
      })
      .where("id", "=", id)
      .where("status", "=", from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Releases tasks whose poll changed nothing; they are looked at again at `nextPollAtMs`. */
  async releaseUnchanged(ids: number[], owner: string, nextPollAtMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable("tasks")
      .set({
        next_poll_at: nextPollAtMs,
        lease_owner: null,
        lease_until: 0,
        poll_errors: 0,
        poll_count: sql`poll_count + 1`,
      })
      .where("id", "in", ids)
      .where("lease_owner", "=", owner)
      .where("status", "in", POLLED_STATUSES)
      .execute();
  }

  /** Releases a task after a failed poll, counting the failure for the backoff. */
  async releaseAfterError(id: number, owner: string, nextPollAtMs: number): Promise<void> {
    await this.db
      .updateTable("tasks")
      .set({
        next_poll_at: nextPollAtMs,
        lease_owner: null,
        lease_until: 0,
        poll_errors: sql`poll_errors + 1`,
        poll_count: sql`poll_count + 1`,
      })
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .where("status", "in", POLLED_STATUSES)
      .execute();
  }

  /**
   * Claims up to `limit` tasks due for a poll and not leased by anyone, for `owner`, until
   * `nowMs + leaseMs`. On PostgreSQL rows another worker is claiming are skipped
   * (`FOR UPDATE SKIP LOCKED`); SQLite runs the statement as its single writer.
   */
  async claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<TaskRow[]> {
    if (limit <= 0) return [];
    let due = this.db
      .selectFrom("tasks")
      .select("id")
      .where("status", "in", POLLED_STATUSES)
      .where("next_poll_at", "<=", nowMs)
      .where("lease_until", "<=", nowMs)
      .orderBy("next_poll_at")
      .limit(limit);
    if (this.dialect === "postgres") due = due.forUpdate().skipLocked();
    return this.db
      .updateTable("tasks")
      .set({ lease_owner: owner, lease_until: nowMs + leaseMs })
      .where("id", "in", due)
      .returningAll()
      .execute();
  }
}
