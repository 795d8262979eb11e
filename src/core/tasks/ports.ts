import type { Channel } from "../channel.js";
import type { UpstreamError } from "../upstream-error.js";
import type { Clip } from "./clips.js";
import type { TaskKind } from "./kinds.js";
import type { TaskView } from "./record.js";
import type { OwnedClip, SourceClip } from "./source-clip.js";
import type { TaskStatus } from "./states.js";
import type { TaskBody } from "./task-kind.js";
import type { UpstreamTaskState } from "./upstream-state.js";

/** A stored task as the use cases see it (JSON columns as text). */
export interface StoredTask extends TaskView {
  token_id: number | null;
  request_body: string;
  upstream_status: string | null;
  next_poll_at: number;
  poll_errors: number;
  callback_secret: string | null;
  callback_url: string | null;
  /** When its owner deleted it (unix seconds; videos only), 0 or absent when not. */
  deleted_at?: number;
}

/** A task to insert, charged in the same transaction. */
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

/** Changes written together with a non-terminal status move. */
export interface TaskChanges {
  progress?: string;
  upstreamStatus?: string | null;
  startTime?: number;
  nextPollAt?: number;
}

/**
 * A task's end as a failure, from `from` (a compare-and-set: of two workers racing on one task
 * only one moves it), with its refund, the user's count of unfinished tasks and the queued webhook
 * in one transaction. True when this call failed it (and so refunded it).
 */
export interface TaskFailPort {
  fail(id: number, from: string, reason: string, upstreamStatus?: string | null): Promise<boolean>;
}

/**
 * The submit's writes: the charged insert (the charge commits with the row), the moves of a task
 * not yet sent, its send and its end when the send fails.
 */
export interface TaskSubmitPort<T extends StoredTask = StoredTask> extends TaskFailPort {
  insertCharged(task: NewTask): Promise<T>;
  /**
   * Replaces the recorded body of a task still NOT_START (its file brought in after the hold).
   * False when the task is no longer NOT_START (the sweeper ended it).
   */
  recordBody(id: number, requestBody: string): Promise<boolean>;
  /**
   * Takes back a task still NOT_START whose submit was answered with an error after its hold (its
   * file could not be brought in): the row goes, its charge is refunded, the user's count of
   * unfinished tasks goes down, in one transaction, and no webhook is queued (the client had the
   * error as its answer). False when the task is no longer NOT_START.
   */
  withdraw(id: number, reason: string): Promise<boolean>;
  /** Moves a task not yet sent to another channel during failover (price unchanged). */
  switchChannel(id: number, channelId: number, properties: string): Promise<boolean>;
  /** NOT_START -> SUBMITTED with the upstream id. False when the task was already failed (swept). */
  markSent(id: number, upstreamId: string, channelId: number, nextPollAtMs: number): Promise<boolean>;
}

/**
 * The workers' moves of sent tasks: leased claims of due tasks, their non-terminal moves and
 * releases, their ends (a success settles its charge), the tasks never sent in time, and an
 * upstream's callback making its task due now.
 */
export interface TaskPollPort<T extends StoredTask = StoredTask> extends TaskFailPort {
  claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<T[]>;
  advance(id: number, from: string, to: TaskStatus, changes: TaskChanges): Promise<boolean>;
  releaseUnchanged(ids: number[], owner: string, nextPollAtMs: number): Promise<void>;
  releaseAfterError(id: number, owner: string, nextPollAtMs: number): Promise<void>;
  /** SUCCESS with its clips; false when the task moved on or its owner deleted it. */
  succeed(task: T, from: string, clips: Clip[], upstreamStatus: string, model: string): Promise<boolean>;
  /** SUCCESS of a task its owner deleted while it ran: settled, no results kept. */
  succeedDeleted(task: T, from: string, upstreamStatus: string): Promise<boolean>;
  /** Tasks charged but never sent whose send deadline has passed. */
  unsentOverdue(nowMs: number, limit: number): Promise<T[]>;
  /** Makes the running task with this callback secret due at once; false when none has it. */
  pokeByCallbackSecret(platform: string, secret: string): Promise<boolean>;
}

/** The reads of tasks: an owner's tasks and the clips of their succeeded tasks. */
export interface TaskReadPort<T extends StoredTask = StoredTask> {
  /** One task of the owner in `platform`, or undefined (foreign and unknown ids look the same). */
  getOwned(platform: string, userId: number, taskId: string): Promise<T | undefined>;
  /** One task of the owner in any platform, or undefined. */
  findOwned(userId: number, taskId: string): Promise<T | undefined>;
  /** The owner's tasks among `taskIds` in `platform`; others are simply absent. */
  listOwned(platform: string, userId: number, taskIds: string[]): Promise<T[]>;
  /** A clip of one of the owner's succeeded tasks of `platform`, or undefined. */
  findOwnedClip(platform: string, userId: number, clipId: string): Promise<OwnedClip | undefined>;
}

/** What a task adapter sends for one task. */
export interface OutgoingTask {
  kind: TaskKind;
  /** The client's body without the gateway's own fields (unknown fields included). */
  body: TaskBody;
  /** The model name the channel's upstream knows. */
  upstreamModel: string;
  /** Where the upstream may call the gateway back about this task, if the family has callbacks. */
  callbackUrl: string | null;
  /** The caller's clip the task works on (checked to be theirs), for kinds with a source clip. */
  source: SourceClip | null;
  /** A file the client sent with the task (a video's reference image). */
  attachment: TaskAttachment | null;
  /** The upstream id of the earlier job this task continues (a remix), if any. */
  continues: string | null;
}

/** A file sent upstream with a task, held in memory until the send. */
export interface TaskAttachment {
  field: string;
  fileName: string;
  mimeType: string;
  bytes: Buffer;
}

/** One task an adapter polls. */
export interface PolledTask {
  upstreamId: string;
  kind: TaskKind;
  /** The body the client sent (parsed), for values the upstream does not echo. */
  body: TaskBody;
}

/**
 * One upstream task protocol, as its adapter implements it. Failures are UpstreamErrors (the
 * adapter classifies them: refused, retryable, auth...).
 */
export interface TaskUpstream {
  /** The kinds (`family:ACTION`) this protocol can do. */
  readonly kinds: readonly string[];
  /** Shortest gap between two polls of one task the protocol allows (ms). */
  readonly minPollIntervalMs: number;
  /** Calls in flight on a channel when its `settings.concurrency` is unset. */
  readonly defaultConcurrency: number;
  /** Most tasks one poll call carries on this channel. */
  batchSize(channel: Channel): number;
  /**
   * Whether the result files at the channel's own address need the channel's key (an
   * authenticated content route): the copy then sends it, to that origin only, with no redirects.
   */
  readonly resultsNeedKey?: boolean;
  /** Sends a task; returns the upstream's id of it. */
  submit(channel: Channel, task: OutgoingTask, signal: AbortSignal): Promise<string>;
  /**
   * Polls up to `batchSize` tasks of one kind. Tasks the upstream does not know are absent from
   * the answer.
   */
  poll(channel: Channel, tasks: PolledTask[], signal?: AbortSignal): Promise<Map<string, UpstreamTaskState>>;
}

/**
 * The `poll` of a protocol that looks up one task a call: each task in turn, those the upstream
 * does not know (null) left out of the answer.
 */
export function pollOneByOne(
  pollOne: (channel: Channel, task: PolledTask, signal?: AbortSignal) => Promise<UpstreamTaskState | null>,
): TaskUpstream["poll"] {
  return async (channel, tasks, signal) => {
    const out = new Map<string, UpstreamTaskState>();
    for (const task of tasks) {
      const state = await pollOne(channel, task, signal);
      if (state) out.set(task.upstreamId, state);
    }
    return out;
  };
}

/** Finds the adapter of a channel type; undefined when the type speaks no task protocol. */
export type TaskUpstreams = (channelType: string) => TaskUpstream | undefined;

/** Per-channel concurrency slots shared by every upstream call of this instance. */
export interface ChannelSlotsPort {
  /** Takes a slot (waiting if need be; a retryable UpstreamError when none frees up); returns its release. */
  acquire(channel: { id: number; settings: { concurrency?: number } }): Promise<() => void>;
}

/** The gateway's logger as the task use cases use it. */
export interface TaskLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Who submits: the authenticated token's owner. */
export interface TaskCaller {
  userId: number;
  tokenId: number | null;
  group: string;
}

/** A file the gateway brought in and stored for an UPLOAD. */
export interface BroughtInFile {
  /** The gateway's URL of the stored copy (what the upstream gets). */
  url: string;
  contentType: string;
  bytes: number;
  /** Removes the stored copy, when the task does not go on. Never rejects. */
  discard(): Promise<void>;
}

/**
 * Brings a client's file in: fetched through the SSRF guard, its size and type checked, stored
 * in the blob store. A refused file is a 400 naming `field`. Called only once the task's hold is
 * taken: a request its balance does not cover fetches and stores nothing.
 */
export interface FileIntakePort {
  /** Longest one intake may take (ms): the fetch's time limit. */
  readonly timeoutMs: number;
  /** `family` names where the stored copy is served (each family serves its own task files). */
  bringIn(url: string, field: string, family: string): Promise<BroughtInFile>;
}

/** What a submit brought in once its hold was taken. */
export interface BroughtIn {
  /** The body to record and send (a file's URL replaced by the gateway's copy, a file described). */
  body: TaskBody;
  /** A file sent beside the body (a video's reference image fetched by URL), if any. */
  attachment: TaskAttachment | null;
  /** Removes what the intake stored, when the task does not go on. Never rejects. */
  discard(): Promise<void>;
}

/**
 * A file a request names by URL, fetched (checked, maybe stored) only once the task's hold is
 * taken, so that a request its balance, token or limits refuse fetches and stores nothing.
 */
export interface TaskIntake {
  /** Longest the intake may take (ms): the task's send deadline is moved by it. */
  timeoutMs: number;
  /** Brings the file in for `body`; a file that cannot be used is a 400 naming its field. */
  bringIn(body: TaskBody): Promise<BroughtIn>;
}

/** Everything the submit use case uses, wired where the routes are registered. */
export interface TaskSubmitDeps {
  /** The submit's writes, and the reads of what a task works on (a source clip, a remixed task). */
  store: TaskSubmitPort & Pick<TaskReadPort, "getOwned" | "findOwnedClip">;
  upstreams: TaskUpstreams;
  slots: ChannelSlotsPort;
  channels: {
    /** Enabled channels serving `model` to `group` whose type's task protocol can do `kind` (`family:ACTION`). */
    candidates(model: string, group: string, kind: string): Promise<Channel[]>;
    /** Hears every upstream attempt's outcome, for channel health and metrics. Must not throw. */
    report(channel: Channel, error: UpstreamError | null, userId: number): void;
  };
  prices: {
    taskPrice(family: string, action: string): Promise<number | null>;
    groupRatio(group: string): Promise<number>;
  };
  /** Brings in the files of kinds with an `intakeField` (UPLOAD). */
  intake: FileIntakePort;
  /** Checks a client's callback URL (SSRF guard); returns it, or throws a 400 naming `field`. */
  checkCallbackUrl(url: string, field: string): Promise<string>;
  /** The URL the upstream calls back for a task with this secret. */
  upstreamCallbackUrl(family: string, secret: string): string;
  /** Public ids: `<prefix>_` + 32 base62 characters (the prefix is the platform's, `task` or `video`). */
  ids: { newTaskId(prefix?: string): string; taskIdOfRun(runId: string, prefix?: string): string; secret(): string };
  now(): number;
  settings: {
    quotaPerUnit: number;
    /** A task not sent within it after its charge is failed by the sweeper (ms). */
    unsentGraceMs: number;
    pollIntervalMs: number;
    timeoutSeconds: number;
    leaseMs: number;
    tasksInFlightPerUser: number;
  };
  /** Told when a submit is refused for too many unfinished tasks. */
  onRateLimited(): void;
  log: TaskLog;
}
