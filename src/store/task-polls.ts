import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import { type Clip, resultUrlOf } from "../core/tasks/clips.js";
import type { StoredTask, TaskChanges, TaskPollPort } from "../core/tasks/ports.js";
import { POLLED_STATUSES, type TaskStatus } from "../core/tasks/states.js";
import type { Ledger } from "./ledger.js";
import type { Database } from "./schema.js";
import { countFinished, failTask, taskReference } from "./task-ends.js";
import type { TaskRow } from "./task-reads.js";
import { queueTaskEndedWebhook } from "./task-webhook-outbox.js";

/** What a success keeps: the clips (their files stored) and the model that made them. */
interface KeptResults {
  clips: Clip[];
  model: string;
}

/**
 * The workers' moves of tasks: leased claims of due tasks and their release, an upstream's
 * callback making its task due now, the non-terminal moves, the ends (a success settles the charge, a failure refunds it, each with its webhook
 * queued in the same transaction) and the tasks never sent in time. Every status move is a
 * compare-and-set (`... WHERE status = old`): of two workers racing on one task only one moves it.
 */
export class TaskPolls implements TaskPollPort<TaskRow> {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: Ledger,
    private readonly dialect: "sqlite" | "postgres",
  ) {}

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
    await this.release(ids, owner, nextPollAtMs, 0);
  }

  /** Releases a task after a failed poll, counting the failure for the backoff. */
  async releaseAfterError(id: number, owner: string, nextPollAtMs: number): Promise<void> {
    await this.release([id], owner, nextPollAtMs, sql`poll_errors + 1`);
  }

  /**
   * Lets `owner`'s lease on still-polled tasks go after a poll, due again at `nextPollAtMs`, with
   * their count of failed polls in a row (`pollErrors`) set.
   */
  private async release(ids: number[], owner: string, nextPollAtMs: number, pollErrors: number | RawBuilder<number>) {
    await this.db
      .updateTable("tasks")
      .set({
        next_poll_at: nextPollAtMs,
        lease_owner: null,
        lease_until: 0,
        poll_errors: pollErrors,
        poll_count: sql`poll_count + 1`,
      })
      .where("id", "in", ids)
      .where("lease_owner", "=", owner)
      .where("status", "in", POLLED_STATUSES)
      .execute();
  }

  /**
   * Makes the task with this callback secret due at once, ahead of tasks that are merely due
   * (claims take the oldest `next_poll_at` first). False when no running task has it.
   */
  async pokeByCallbackSecret(platform: string, secret: string): Promise<boolean> {
    const res = await this.db
      .updateTable("tasks")
      .set({ next_poll_at: 0 })
      .where("callback_secret", "=", secret)
      .where("platform", "=", platform)
      .where("status", "in", POLLED_STATUSES)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Tasks charged but never sent whose send deadline has passed. */
  async unsentOverdue(nowMs: number, limit: number): Promise<TaskRow[]> {
    return this.db
      .selectFrom("tasks")
      .selectAll()
      .where("status", "=", "NOT_START")
      .where("next_poll_at", "<=", nowMs)
      .orderBy("next_poll_at")
      .limit(limit)
      .execute();
  }

  /** FAILURE with its refund (see failTask): a poll's verdict, the sweeper's or the reaper's. */
  fail(id: number, from: string, reason: string, upstreamStatus?: string | null): Promise<boolean> {
    return failTask(this.ledger, id, from, reason, upstreamStatus);
  }

  /**
   * Moves a task to SUCCESS with its clips, only if it is still in `from` and its owner has not
   * deleted it (a deleted one ends by `succeedDeleted`, keeping no results); its charge is settled
   * and the webhook announcing the end is queued in the same transaction.
   */
  succeed(task: StoredTask, from: string, clips: Clip[], upstreamStatus: string, model: string): Promise<boolean> {
    return this.endSold(task, from, upstreamStatus, { clips, model });
  }

  /**
   * Moves a task its owner deleted while it ran (a video) to SUCCESS with no results, only if it
   * is still in `from`: the upstream made it and bills it, so its charge is settled, but nothing
   * of it is stored or shown. The webhook announcing the end is queued as for any success.
   */
  succeedDeleted(task: StoredTask, from: string, upstreamStatus: string): Promise<boolean> {
    return this.endSold(task, from, upstreamStatus, null);
  }

  /**
   * A sale's end, in one transaction: SUCCESS (with the results `kept`, or none for a task its
   * owner deleted), counted finished, settled, announced, and the kept clips indexed.
   */
  private endSold(task: StoredTask, from: string, upstreamStatus: string, kept: KeptResults | null): Promise<boolean> {
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
          result_url: kept ? resultUrlOf(kept.clips[0]) : null,
          data: kept ? JSON.stringify({ clips: kept.clips }) : "{}",
          upstream_status: upstreamStatus,
          ...(kept ? {} : { files_removed_at: now }),
          lease_owner: null,
          lease_until: 0,
          poll_errors: 0,
          updated_at: now,
        })
        .where("id", "=", task.id)
        .where("status", "=", from)
        .where("deleted_at", kept ? "=" : ">", 0)
        .returning(["callback_url"])
        .executeTakeFirst();
      if (!res) return false;
      await countFinished(trx, Number(task.user_id));
      // A sale closes its charge explicitly: open always means unfinished.
      const note = kept ? "task succeeded" : "task succeeded after its owner deleted it";
      await this.ledger.settleIn(trx, taskReference(task.task_id), Number(task.quota), note);
      await queueTaskEndedWebhook(trx, {
        taskId: task.task_id,
        userId: Number(task.user_id),
        status: "SUCCESS",
        callbackUrl: res.callback_url,
      });
      if (kept) await this.indexClips(trx, task, kept, now);
      return true;
    });
  }

  /** The kept clips in `task_clips`, so the actions on a clip can check the caller owns it. */
  private async indexClips(trx: Transaction<Database>, task: StoredTask, kept: KeptResults, now: number) {
    const seen = new Set<string>();
    const rows = kept.clips
      .filter((c) => !seen.has(c.clip_id) && seen.add(c.clip_id))
      .map((c) => ({
        clip_id: c.clip_id,
        task_id: task.task_id,
        user_id: Number(task.user_id),
        platform: task.platform,
        model: "mv" in c ? c.mv || kept.model : kept.model,
        created_at: now,
      }));
    if (rows.length === 0) return;
    await trx
      .insertInto("task_clips")
      .values(rows)
      .onConflict((oc) => oc.columns(["clip_id", "task_id"]).doNothing())
      .execute();
  }
}
