import type { Channel } from "../core/channel.js";
import { findKind, type TaskKind } from "../core/tasks/kinds.js";
import { type PollClock, type PollReport, pollOutcome, type Transition } from "../core/tasks/poll-outcome.js";
import type {
  ChannelSlotsPort,
  StoredTask,
  TaskLog,
  TaskPollPort,
  TaskUpstream,
  TaskUpstreams,
} from "../core/tasks/ports.js";
import { afterFailedCopy, type ResultCopierPort, storeResultFiles } from "../core/tasks/result-files.js";
import type { TaskBody } from "../core/tasks/task-kind.js";
import type { BackgroundService } from "../lifecycle/background-service.js";

/** What the poller uses, built where the workers are registered. */
export interface TaskPollerDeps {
  store: Pick<
    TaskPollPort,
    "claimDue" | "advance" | "fail" | "succeed" | "succeedDeleted" | "releaseUnchanged" | "releaseAfterError"
  >;
  channels: { list(): Promise<Channel[]> };
  upstreams: TaskUpstreams;
  /** The per-channel slots every upstream call of this instance shares (submits and content too). */
  slots: ChannelSlotsPort;
  /** Copies the result files of a task the upstream finished into the gateway's storage. */
  results: ResultCopierPort;
  /** Closes what the result copies hold open (connections), once the last round is over. */
  closeResults?(): Promise<void>;
  settings: {
    leaseMs: number;
    workerTickMs: number;
    pollIntervalMs: number;
    maxPollIntervalMs: number;
    timeoutSeconds: number;
  };
  /** Lease owner name of this instance. */
  instanceId: string;
  log: TaskLog;
  observe: { pollLag(platform: string, seconds: number): void; pollBatch(platform: string, size: number): void };
}

export interface TaskPollerOptions {
  /** Most tasks this instance works on at once. */
  maxInFlight?: number;
  /** Most tasks claimed by one claim statement. */
  claimBatch?: number;
}

function parseBody(text: string): TaskBody {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

/**
 * Polls the upstream of running tasks. Due tasks are claimed with a lease (so any number of
 * instances share the work), grouped by channel and kind, fetched in batches as large as the
 * channel's adapter allows, each call in one of the channel's slots, and moved as `pollOutcome`
 * decides, by compare-and-set. A task the upstream finished has its result files copied into the
 * gateway's storage before its SUCCESS is committed (`storeResultFiles`).
 */
export class TaskPoller implements BackgroundService {
  readonly name = "task-poller";
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightTasks = 0;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private readonly maxInFlight: number;
  private readonly claimBatch: number;

  constructor(
    private readonly deps: TaskPollerDeps,
    options: TaskPollerOptions = {},
  ) {
    // Claiming only what can be polled soon keeps leases short and lets a task made due by a
    // callback be polled within a round instead of queueing behind thousands of claimed ones.
    this.maxInFlight = options.maxInFlight ?? 1_000;
    this.claimBatch = options.claimBatch ?? 500;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.sleeper) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.resolve();
    }
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.deps.closeResults?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = null;
        resolve();
      }, ms);
      this.sleeper = { timer, resolve };
    });
  }

  private async run(): Promise<void> {
    const { settings, store, instanceId, log } = this.deps;
    while (this.running) {
      const want = Math.min(this.claimBatch, this.maxInFlight - this.inFlightTasks);
      let claimed: StoredTask[] = [];
      if (want > 0) {
        try {
          claimed = await store.claimDue(instanceId, Date.now(), settings.leaseMs, want);
        } catch (err) {
          log.warn({ err }, "claiming due tasks failed");
        }
      }
      if (claimed.length > 0) {
        const count = claimed.length;
        this.inFlightTasks += count;
        const work = this.process(claimed)
          .catch((err) => log.error({ err }, "task poll round failed"))
          .finally(() => {
            this.inFlightTasks -= count;
            this.inFlight.delete(work);
          });
        this.inFlight.add(work);
      }
      if (this.running && (want <= 0 || claimed.length < want)) await this.sleep(settings.workerTickMs);
    }
  }

  /** Polls one claimed set of tasks: grouped by channel and kind, batched, in parallel. */
  private async process(claimed: StoredTask[]): Promise<void> {
    const channels = new Map((await this.deps.channels.list()).map((c) => [c.id, c]));
    const groups = new Map<string, StoredTask[]>();
    const now = Date.now();
    for (const t of claimed) {
      const due = Number(t.next_poll_at);
      if (due > 0) this.deps.observe.pollLag(t.platform, Math.max(0, now - due) / 1000);
      const key = `${t.channel_id}\u0000${t.platform}\u0000${t.action}`;
      const g = groups.get(key);
      if (g) g.push(t);
      else groups.set(key, [t]);
    }
    const jobs: Promise<void>[] = [];
    for (const group of groups.values()) {
      const first = group[0] as StoredTask;
      const channel = channels.get(Number(first.channel_id));
      const upstream = channel && this.deps.upstreams(channel.type);
      const kind = findKind(first.platform, first.action);
      if (!channel || !upstream || !kind) {
        const reason = channel
          ? "the task's channel cannot poll this kind of task"
          : "the task's channel no longer exists";
        for (const t of group) jobs.push(this.settle(t, { kind: "error", reason }, 0, now));
        continue;
      }
      const size = upstream.batchSize(channel);
      for (let i = 0; i < group.length; i += size) {
        jobs.push(this.pollChunk(channel, upstream, kind, group.slice(i, i + size)));
      }
    }
    await Promise.all(jobs);
  }

  private async pollChunk(channel: Channel, upstream: TaskUpstream, kind: TaskKind, chunk: StoredTask[]) {
    const minIntervalMs = upstream.minPollIntervalMs;
    this.deps.observe.pollBatch(kind.family, chunk.length);
    let states: Awaited<ReturnType<TaskUpstream["poll"]>>;
    try {
      const concurrency = channel.settings.concurrency ?? upstream.defaultConcurrency;
      const release = await this.deps.slots.acquire({ id: channel.id, settings: { concurrency } });
      try {
        states = await upstream.poll(
          channel,
          chunk.map((t) => ({ upstreamId: t.upstream_id ?? "", kind, body: parseBody(t.request_body) })),
        );
      } finally {
        release();
      }
    } catch (err) {
      this.deps.log.warn({ err, channelId: channel.id, tasks: chunk.length }, "task poll failed");
      const reason = (err as Error).message;
      const failedAt = Date.now();
      await Promise.all(chunk.map((t) => this.settle(t, { kind: "error", reason }, minIntervalMs, failedAt)));
      return;
    }
    const released = new Map<number, number[]>();
    const finishing: Promise<void>[] = [];
    const now = Date.now();
    for (const t of chunk) {
      const state = states.get(t.upstream_id ?? "");
      const report: PollReport = state
        ? { kind: "state", state }
        : { kind: "error", reason: "the upstream does not know the task" };
      // Finished tasks copy their files: those of one chunk are copied side by side.
      if (state?.status === "SUCCESS") finishing.push(this.settle(t, report, minIntervalMs, now, released, channel));
      else await this.settle(t, report, minIntervalMs, now, released, channel);
    }
    await Promise.all(finishing);
    // Tasks whose poll changed nothing are released together, one statement per poll time.
    for (const [at, ids] of released) await this.deps.store.releaseUnchanged(ids, this.deps.instanceId, at);
  }

  /** Applies what `pollOutcome` decides for one task (a release is collected into `released`). */
  private async settle(
    t: StoredTask,
    report: PollReport,
    minIntervalMs: number,
    nowMs: number,
    released?: Map<number, number[]>,
    channel?: Channel,
  ) {
    const { settings } = this.deps;
    const clock: PollClock = {
      nowMs,
      timeoutSeconds: settings.timeoutSeconds,
      timing: { pollIntervalMs: settings.pollIntervalMs, maxPollIntervalMs: settings.maxPollIntervalMs, minIntervalMs },
    };
    await this.apply(t, pollOutcome(t, report, clock), clock, released, channel);
  }

  /** Removes copies no task took; a failure is logged (the file stays, unreferenced). */
  private async discard(t: StoredTask, urls: string[]): Promise<void> {
    for (const url of urls) {
      await this.deps.results.discard?.(url).catch((err: unknown) => {
        this.deps.log.warn({ err, taskId: t.task_id }, "an unused result copy could not be removed");
      });
    }
  }

  /** Makes one move of a task by compare-and-set (a success only once its files are stored). */
  private async apply(
    t: StoredTask,
    decision: Transition,
    clock: PollClock,
    released?: Map<number, number[]>,
    channel?: Channel,
  ): Promise<void> {
    const { store, log, instanceId } = this.deps;
    switch (decision.kind) {
      case "succeed": {
        // Deleted by its owner while it ran (a video): the upstream made it and bills it, so the
        // charge settles, but nobody will fetch its files: none are copied.
        if (Number(t.deleted_at ?? 0) > 0) {
          await store.succeedDeleted(t, t.status, decision.upstreamStatus);
          return;
        }
        const withKey = channel ? this.deps.upstreams(channel.type)?.resultsNeedKey : undefined;
        const stored = channel
          ? await storeResultFiles(decision.clips, t.platform, channel, this.deps.results, { withKey })
          : { kind: "failed" as const, lasting: false, reason: "the task's channel is unknown", copies: [] };
        if (stored.kind === "stored") {
          const moved = await store.succeed(t, t.status, stored.clips, decision.upstreamStatus, decision.model);
          if (moved) return;
          // The task moved on meanwhile (timed out, another worker) or was deleted while its
          // files were copied: its copies are nobody's. A deleted one still ends, settled.
          await this.discard(t, stored.copies);
          await store.succeedDeleted(t, t.status, decision.upstreamStatus);
          return;
        }
        await this.discard(t, stored.copies);
        log.warn({ taskId: t.task_id, lasting: stored.lasting, reason: stored.reason }, "storing task results failed");
        const next = afterFailedCopy(t, stored, { ...clock, nowMs: Date.now() });
        await this.apply(t, next.kind === "fail" ? { ...next, upstreamStatus: decision.upstreamStatus } : next, clock);
        return;
      }
      case "fail": {
        const failed = await store.fail(t.id, t.status, decision.reason, decision.upstreamStatus);
        if (failed && decision.timedOut) log.info({ taskId: t.task_id }, "task timed out; refunded");
        return;
      }
      case "advance":
        // An unknown word is not fatal: it is logged (and stored) when it first appears.
        if (decision.unknownWord !== undefined) {
          log.warn({ taskId: t.task_id, word: decision.unknownWord }, "unknown upstream task status");
        }
        await store.advance(t.id, t.status, decision.to, decision.changes);
        return;
      case "release":
        if (released) released.set(decision.nextPollAt, [...(released.get(decision.nextPollAt) ?? []), t.id]);
        else await store.releaseUnchanged([t.id], instanceId, decision.nextPollAt);
        return;
      case "back-off":
        log.debug({ taskId: t.task_id, reason: decision.reason }, "task poll did not succeed; backing off");
        await store.releaseAfterError(t.id, instanceId, decision.nextPollAt);
        return;
    }
  }
}
