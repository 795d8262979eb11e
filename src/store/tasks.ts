import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import { GatewayError } from "../core/errors.js";
import type { Clip } from "../core/tasks/clips.js";
import { POLLED_STATUSES, type TaskStatus } from "../core/tasks/states.js";
import { queueTaskEndedWebhook } from "../webhooks/outbox.js";
import type { Ledger } from "./ledger.js";
import type { Database, TasksTable } from "./schema.js";

export type TaskRow = Selectable<TasksTable>;

/** Clips of succeeded tasks, so REPLACE and INSTRUMENTALS_SWAP can check the caller owns a clip. */
interface TaskClipsTable {
  clip_id: string;
  task_id: string;
  user_id: number;
  platform: string;
  model: string;
  created_at: number;
}
type TaskDb = Database & { task_clips: TaskClipsTable };

export interface NewTask {
  taskId: string;
  platform: string;
  userId: number;
  tokenId: number | null;
  group: string;
  channelId: number;
  quota: number;
  action: string;
  properties: string;
  requestBody: string;
  callbackSecret: string | null;
  /** Where the task's end is announced; null = the user's default webhook, if any. */
  callbackUrl?: string | null;
  /** Until then the task belongs to its sender; after it the sweeper may fail it (ms). */
  sendDeadlineMs: number;
  /** Most unfinished tasks the user may have, this one included; 0 = no limit. */
  unfinishedLimit?: number;
  /** Unix milliseconds by which the task's charge must be closed (its timeout bounds it). */
  chargeCloseBy: number;
}

/** Changes written together with a status move. */
export interface TaskChanges {
  progress?: string;
  upstreamStatus?: string | null;
  startTime?: number;
  nextPollAt?: number;
}

/** The ledger reference of a task's charge and refund. */
export function taskReference(taskId: string): string {
  return `task:${taskId}`;
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The task repository. Every status move is a compare-and-set (`... WHERE status = old`): of two
 * workers racing on one task only one moves it. FAILURE commits with its refund, and the first
 * charge commits with the insert.
 */
export class TaskStore {
  private readonly tdb: Kysely<TaskDb>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: Ledger,
    private readonly dialect: "sqlite" | "postgres",
  ) {
    this.tdb = db as unknown as Kysely<TaskDb>;
  }

  /**
   * Charges the caller and inserts the task as NOT_START, in one transaction. The user's count of
   * unfinished tasks goes up in the same transaction by one conditional update of the user's row
   * (refused at `unfinishedLimit`), so parallel submits can never pass the limit together.
   */
  async insertCharged(task: NewTask): Promise<TaskRow> {
    return this.ledger.transaction(async (trx) => {
      const limit = task.unfinishedLimit ?? 0;
      let counted = trx
        .updateTable("users")
        .set({ tasks_unfinished: sql`tasks_unfinished + 1` })
        .where("id", "=", task.userId);
      if (limit > 0) counted = counted.where("tasks_unfinished", "<", limit);
      const counter = await counted.executeTakeFirst();
      if (Number(counter.numUpdatedRows) !== 1) {
        throw new GatewayError(
          "GW_ERR_RATE_LIMITED",
          `You have ${limit} unfinished tasks, the most allowed at once; submit again when one has ended.`,
          { headers: { "retry-after": "5" } },
        );
      }
      await this.ledger.chargeIn(trx, {
        userId: task.userId,
        tokenId: task.tokenId,
        amount: task.quota,
        reference: taskReference(task.taskId),
        note: `${task.platform} ${task.action}`,
        closeBy: task.chargeCloseBy,
      });
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
    });
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
   * Moves a task to SUCCESS with its clips, only if it is still in `from`; its charge is settled
   * and the webhook announcing the end is queued in the same transaction.
   */
  async succeed(task: TaskRow, from: string, clips: Clip[], upstreamStatus: string, model: string): Promise<boolean> {
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
          result_url: first?.audio_url ?? "",
          data: JSON.stringify({ clips }),
          upstream_status: upstreamStatus,
          lease_owner: null,
          lease_until: 0,
          poll_errors: 0,
          updated_at: now,
        })
        .where("id", "=", task.id)
        .where("status", "=", from)
        .returning(["callback_url"])
        .executeTakeFirst();
      if (!res) return false;
      await this.countFinished(trx, Number(task.user_id));
      // A sale closes its charge explicitly: open always means unfinished.
      await this.ledger.settleIn(trx, taskReference(task.task_id), Number(task.quota), "task succeeded");
      await this.indexClips(trx, task, clips, model, now);
      await queueTaskEndedWebhook(trx, {
        taskId: task.task_id,
        userId: Number(task.user_id),
        status: "SUCCESS",
        callbackUrl: res.callback_url,
      });
      return true;
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

  private async indexClips(trx: Transaction<Database>, task: TaskRow, clips: Clip[], model: string, now: number) {
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

  /** One task of the owner, or undefined (foreign and unknown ids look the same). */
  getOwned(platform: string, userId: number, taskId: string): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom("tasks")
      .selectAll()
      .where("task_id", "=", taskId)
      .where("user_id", "=", userId)
      .where("platform", "=", platform)
      .executeTakeFirst();
  }

  /** One task of the owner in any family, or undefined (what a webhook announces). */
  findOwned(userId: number, taskId: string): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom("tasks")
      .selectAll()
      .where("task_id", "=", taskId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
  }

  /** The owner's tasks among `taskIds`; others are simply absent. */
  async listOwned(platform: string, userId: number, taskIds: string[]): Promise<TaskRow[]> {
    if (taskIds.length === 0) return [];
    // Looked up by the unique task_id alone, owner checked on the rows found: with the owner in
    // the WHERE, SQLite walks the owner's index and reads every task the owner ever had.
    const rows = await this.db.selectFrom("tasks").selectAll().where("task_id", "in", taskIds).execute();
    return rows.filter((r) => Number(r.user_id) === userId && r.platform === platform);
  }

  /** A clip of one of the owner's succeeded tasks of `platform`, with the model that made it. */
  async findOwnedClip(platform: string, userId: number, clipId: string): Promise<{ model: string } | undefined> {
    const row = await this.tdb
      .selectFrom("task_clips")
      .select(["model"])
      .where("user_id", "=", userId)
      .where("clip_id", "=", clipId)
      .where("platform", "=", platform)
      .executeTakeFirst();
    return row ? { model: row.model } : undefined;
  }
}
