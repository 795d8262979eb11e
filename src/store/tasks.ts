import type { Kysely } from "kysely";
import type { Clip } from "../core/tasks/clips.js";
import type {
  NewTask,
  StoredTask,
  TaskChanges,
  TaskPollPort,
  TaskReadPort,
  TaskSubmitPort,
} from "../core/tasks/ports.js";
import type { OwnedClip } from "../core/tasks/source-clip.js";
import type { TaskStatus } from "../core/tasks/states.js";
import type { Ledger } from "./ledger.js";
import type { Database } from "./schema.js";
import { TaskPolls } from "./task-polls.js";
import { TaskReads, type TaskRow } from "./task-reads.js";
import { TaskSubmits } from "./task-submits.js";

/**
 * The task store as the gateway wires it: the submit's writes (task-submits.ts), the workers'
 * moves (task-polls.ts) and the reads (task-reads.ts), three classes over one database and
 * ledger. Each caller is typed by the port it uses (core/tasks/ports.ts); this object serves
 * them all, each method handing over to the part that owns it.
 */
export class TaskStore implements TaskSubmitPort<TaskRow>, TaskPollPort<TaskRow>, TaskReadPort<TaskRow> {
  private readonly submits: TaskSubmits;
  private readonly polls: TaskPolls;
  private readonly reads: TaskReads;

  constructor(db: Kysely<Database>, ledger: Ledger, dialect: "sqlite" | "postgres") {
    this.submits = new TaskSubmits(db, ledger);
    this.polls = new TaskPolls(db, ledger, dialect);
    this.reads = new TaskReads(db);
  }

  insertCharged(task: NewTask): Promise<TaskRow> {
    return this.submits.insertCharged(task);
  }
  recordBody(id: number, requestBody: string): Promise<boolean> {
    return this.submits.recordBody(id, requestBody);
  }
  withdraw(id: number, reason: string): Promise<boolean> {
    return this.submits.withdraw(id, reason);
  }
  switchChannel(id: number, channelId: number, properties: string): Promise<boolean> {
    return this.submits.switchChannel(id, channelId, properties);
  }
  markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): Promise<boolean> {
    return this.submits.markSent(id, upstreamId, channelId, nextPollAtMs);
  }
  fail(id: number, from: string, reason: string, upstreamStatus?: string | null): Promise<boolean> {
    return this.polls.fail(id, from, reason, upstreamStatus);
  }

  claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<TaskRow[]> {
    return this.polls.claimDue(owner, nowMs, leaseMs, limit);
  }
  advance(id: number, from: string, to: TaskStatus, changes: TaskChanges): Promise<boolean> {
    return this.polls.advance(id, from, to, changes);
  }
  releaseUnchanged(ids: number[], owner: string, nextPollAtMs: number): Promise<void> {
    return this.polls.releaseUnchanged(ids, owner, nextPollAtMs);
  }
  releaseAfterError(id: number, owner: string, nextPollAtMs: number): Promise<void> {
    return this.polls.releaseAfterError(id, owner, nextPollAtMs);
  }
  succeed(task: StoredTask, from: string, clips: Clip[], upstreamStatus: string, model: string): Promise<boolean> {
    return this.polls.succeed(task, from, clips, upstreamStatus, model);
  }
  succeedDeleted(task: StoredTask, from: string, upstreamStatus: string): Promise<boolean> {
    return this.polls.succeedDeleted(task, from, upstreamStatus);
  }
  unsentOverdue(nowMs: number, limit: number): Promise<TaskRow[]> {
    return this.polls.unsentOverdue(nowMs, limit);
  }
  pokeByCallbackSecret(platform: string, secret: string): Promise<boolean> {
    return this.polls.pokeByCallbackSecret(platform, secret);
  }

  getOwned(platform: string, userId: number, taskId: string): Promise<TaskRow | undefined> {
    return this.reads.getOwned(platform, userId, taskId);
  }
  findOwned(userId: number, taskId: string): Promise<TaskRow | undefined> {
    return this.reads.findOwned(userId, taskId);
  }
  listOwned(platform: string, userId: number, taskIds: string[]): Promise<TaskRow[]> {
    return this.reads.listOwned(platform, userId, taskIds);
  }
  findOwnedClip(platform: string, userId: number, clipId: string): Promise<OwnedClip | undefined> {
    return this.reads.findOwnedClip(platform, userId, clipId);
  }
}
