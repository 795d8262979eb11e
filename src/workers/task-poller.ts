import type { BackgroundService } from "../background-service.js";
import type { GatewayContext } from "../context.js";
import type { Channel } from "../core/channel.js";
import { type AudiobMusicBody, audiobTuning } from "../core/tasks/request-bodies.js";
import { nextPollAt, nextPollDelay, taskDeadlineMs } from "../core/tasks/schedule.js";
import { canMove, type TaskStatus } from "../core/tasks/states.js";
import type { UpstreamTaskState } from "../core/tasks/upstream-state.js";
import type { TaskRow, TaskStore } from "../store/tasks.js";
import { fetchRecordInfo, RECORD_MIN_POLL_INTERVAL_MS } from "../upstreams/generate-record/index.js";
import { fetchRelayTasks, relayBatchSize } from "../upstreams/task-relay/index.js";
import { ConcurrencyLimit } from "./concurrency-limit.js";

export interface TaskPollerOptions {
  /** Most tasks this instance works on at once. */
  maxInFlight?: number;
  /** Most tasks claimed by one claim statement. */
  claimBatch?: number;
}

const DEFAULT_CONCURRENCY = { "task-relay": 4, "generate-record": 16 } as const;

function percent(progress: string): number {
  const n = Number.parseInt(progress, 10);
  return Number.isFinite(n) ? n : 0;
}

/**
 * Polls the upstream of running tasks. Due tasks are claimed with a lease (so any number of
 * instances share the work), grouped by channel, fetched in batches where the protocol allows it
 * (task-relay: up to 100 ids a call) under a per-channel concurrency limit, and moved by
 * compare-and-set. A timeout ends a task in FAILURE with its refund.
 */
export class TaskPoller implements BackgroundService {
  readonly name = "task-poller";
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightTasks = 0;
  private readonly limits = new Map<number, ConcurrencyLimit>();
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private readonly maxInFlight: number;
  private readonly claimBatch: number;

  constructor(
    private readonly ctx: GatewayContext,
    private readonly store: TaskStore,
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
    const { tasks } = this.ctx.config;
    while (this.running) {
      const want = Math.min(this.claimBatch, this.maxInFlight - this.inFlightTasks);
      let claimed: TaskRow[] = [];
      if (want > 0) {
        try {
          claimed = await this.store.claimDue(this.ctx.instanceId, Date.now(), tasks.leaseMs, want);
        } catch (err) {
          this.ctx.logger.warn({ err }, "claiming due tasks failed");
        }
      }
      if (claimed.length > 0) {
        const count = claimed.length;
        this.inFlightTasks += count;
        const work = this.process(claimed)
          .catch((err) => this.ctx.logger.error({ err }, "task poll round failed"))
          .finally(() => {
            this.inFlightTasks -= count;
            this.inFlight.delete(work);
          });
        this.inFlight.add(work);
      }
      if (this.running && (want <= 0 || claimed.length < want)) await this.sleep(tasks.workerTickMs);
    }
  }

  private limitFor(channel: Channel): ConcurrencyLimit {
    const limit =
      channel.settings.concurrency ?? DEFAULT_CONCURRENCY[channel.type as keyof typeof DEFAULT_CONCURRENCY] ?? 4;
    let l = this.limits.get(channel.id);
    if (!l) {
      l = new ConcurrencyLimit(limit);
      this.limits.set(channel.id, l);
    }
    l.limit = limit;
    return l;
  }

  /** Polls one claimed set of tasks: grouped by channel (and action), batched, in parallel. */
  private async process(claimed: TaskRow[]): Promise<void> {
    const channels = new Map((await this.ctx.channels.list()).map((c) => [c.id, c]));
    const groups = new Map<string, TaskRow[]>();
    const now = Date.now();
    for (const t of claimed) {
      const due = Number(t.next_poll_at);
      if (due > 0) this.ctx.metrics.pollLag.observe({ platform: t.platform }, Math.max(0, now - due) / 1000);
      const key = `${t.channel_id}\u0000${t.action}`;
      const g = groups.get(key);
      if (g) g.push(t);
      else groups.set(key, [t]);
    }
    const jobs: Promise<void>[] = [];
    for (const group of groups.values()) {
      const first = group[0] as TaskRow;
      const channel = channels.get(Number(first.channel_id));
      if (!channel) {
        for (const t of group) jobs.push(this.onPollError(t, "the task's channel no longer exists", 0));
        continue;
      }
      const limit = this.limitFor(channel);
      if (channel.type === "task-relay") {
        const size = relayBatchSize(channel);
        for (let i = 0; i < group.length; i += size) {
          const chunk = group.slice(i, i + size);
          jobs.push(limit.run(() => this.pollRelayChunk(channel, chunk)));
        }
      } else {
        for (const t of group) jobs.push(limit.run(() => this.pollRecordTask(channel, t)));
      }
    }
    await Promise.all(jobs);
  }

  private async pollRelayChunk(channel: Channel, chunk: TaskRow[]): Promise<void> {
    const first = chunk[0] as TaskRow;
    this.ctx.metrics.pollBatchSize.observe({ platform: first.platform }, chunk.length);
    let states: Map<string, UpstreamTaskState>;
    try {
      states = await fetchRelayTasks(
        channel,
        first.platform,
        first.action,
        chunk.map((t) => t.upstream_id ?? ""),
      );
    } catch (err) {
      this.ctx.logger.warn({ err, channelId: channel.id, tasks: chunk.length }, "task-relay poll failed");
      await Promise.all(chunk.map((t) => this.onPollError(t, (err as Error).message, 0)));
      return;
    }
    const unchanged: TaskRow[] = [];
    for (const t of chunk) {
      const state = states.get(t.upstream_id ?? "");
      if (!state) {
        await this.onPollError(t, "the upstream does not know the task", 0);
        continue;
      }
      if (!(await this.apply(t, state, 0))) unchanged.push(t);
    }
    await this.releaseUnchanged(unchanged, 0);
  }

  private async pollRecordTask(channel: Channel, t: TaskRow): Promise<void> {
    this.ctx.metrics.pollBatchSize.observe({ platform: t.platform }, 1);
    let state: UpstreamTaskState | null;
    try {
      state = await fetchRecordInfo(channel, t.upstream_id ?? "", audiobTuning(parseBody(t.request_body)));
    } catch (err) {
      this.ctx.logger.warn({ err, channelId: channel.id, taskId: t.task_id }, "generate-record poll failed");
      await this.onPollError(t, (err as Error).message, RECORD_MIN_POLL_INTERVAL_MS);
      return;
    }
    if (!state) {
      await this.onPollError(t, "the upstream does not know the task", RECORD_MIN_POLL_INTERVAL_MS);
      return;
    }
    if (!(await this.apply(t, state, RECORD_MIN_POLL_INTERVAL_MS))) {
      await this.releaseUnchanged([t], RECORD_MIN_POLL_INTERVAL_MS);
    }
  }

  private deadline(t: TaskRow): number {
    return taskDeadlineMs(Number(t.submit_time), this.ctx.config.tasks.timeoutSeconds);
  }

  private timing(minIntervalMs: number) {
    const { pollIntervalMs, maxPollIntervalMs } = this.ctx.config.tasks;
    return { pollIntervalMs, maxPollIntervalMs, minIntervalMs };
  }

  private async failOnTimeout(t: TaskRow): Promise<void> {
    const seconds = this.ctx.config.tasks.timeoutSeconds;
    const failed = await this.store.fail(t.id, t.status, `the task did not finish within ${seconds} seconds`);
    if (failed) this.ctx.logger.info({ taskId: t.task_id }, "task timed out; refunded");
  }

  /**
   * Applies what the upstream said. Returns false when nothing changed (the caller releases the
   * task in bulk), true when the task was moved (or someone else moved it first).
   */
  private async apply(t: TaskRow, state: UpstreamTaskState, minIntervalMs: number): Promise<boolean> {
    const now = Date.now();
    const from = t.status;
    if (state.status === null) {
      // An unknown word is not fatal: the task stays as it is and the timeout still applies. It
      // is logged (and stored) when it first appears, not on every poll.
      if (state.rawStatus !== t.upstream_status && now < this.deadline(t)) {
        this.ctx.logger.warn({ taskId: t.task_id, word: state.rawStatus }, "unknown upstream task status");
        await this.store.advance(t.id, from, from as TaskStatus, {
          upstreamStatus: state.rawStatus,
          nextPollAt: nextPollAt(now, nextPollDelay(0, this.timing(minIntervalMs)), this.deadline(t)),
        });
        return true;
      }
    } else if (state.status === "SUCCESS") {
      const first = state.clips[0];
      if (!first || first.audio_url === "") {
        await this.store.fail(t.id, from, "the upstream reported success without any audio", state.rawStatus);
        return true;
      }
      const model = safeModel(t.properties);
      await this.store.succeed(t, from, state.clips, state.rawStatus, model);
      return true;
    } else if (state.status === "FAILURE") {
      await this.store.fail(
        t.id,
        from,
        state.failReason || "the upstream reported that the task failed",
        state.rawStatus,
      );
      return true;
    }
    if (now >= this.deadline(t)) {
      await this.failOnTimeout(t);
      return true;
    }
    const target: TaskStatus =
      state.status !== null && canMove(from as TaskStatus, state.status) ? state.status : (from as TaskStatus);
    // Progress shows while running and never goes back.
    const progress =
      target === "IN_PROGRESS" && state.progress !== null && percent(state.progress) > percent(t.progress)
        ? state.progress
        : t.progress;
    if (target === from && progress === t.progress) return false;
    await this.store.advance(t.id, from, target, {
      progress,
      upstreamStatus: state.rawStatus,
      startTime: target === "IN_PROGRESS" && Number(t.start_time) === 0 ? Math.floor(now / 1000) : undefined,
      nextPollAt: nextPollAt(now, nextPollDelay(0, this.timing(minIntervalMs)), this.deadline(t)),
    });
    return true;
  }

  private async releaseUnchanged(tasks: TaskRow[], minIntervalMs: number): Promise<void> {
    if (tasks.length === 0) return;
    const now = Date.now();
    const delay = nextPollDelay(0, this.timing(minIntervalMs));
    const bulk: number[] = [];
    for (const t of tasks) {
      const deadline = this.deadline(t);
      if (now >= deadline) await this.failOnTimeout(t);
      else if (now + delay <= deadline) bulk.push(t.id);
      else await this.store.releaseUnchanged([t.id], this.ctx.instanceId, deadline);
    }
    await this.store.releaseUnchanged(bulk, this.ctx.instanceId, now + delay);
  }

  private async onPollError(t: TaskRow, reason: string, minIntervalMs: number): Promise<void> {
    const now = Date.now();
    const deadline = this.deadline(t);
    if (now >= deadline) {
      await this.failOnTimeout(t);
      return;
    }
    this.ctx.logger.debug({ taskId: t.task_id, reason }, "task poll did not succeed; backing off");
    const delay = nextPollDelay(Number(t.poll_errors) + 1, this.timing(minIntervalMs));
    await this.store.releaseAfterError(t.id, this.ctx.instanceId, nextPollAt(now, delay, deadline));
  }
}

function parseBody(text: string): AudiobMusicBody {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

function safeModel(properties: string): string {
  try {
    const v = JSON.parse(properties);
    return typeof v?.origin_model_name === "string" ? v.origin_model_name : "";
  } catch {
    return "";
  }
}
