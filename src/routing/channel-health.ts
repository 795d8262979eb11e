import type { FastifyBaseLogger } from "fastify";
import type { Channel } from "../core/channel.js";
import type { UpstreamError } from "../core/upstream-error.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import type { Channels } from "../store/channels.js";

export const AUTO_DISABLED = "auto_disabled";

/** The reason a channel is disabled with when no key of its pool is live; the key prober lifts it. */
export const NO_LIVE_KEY = "no live key: every key of the channel was refused by the upstream";

/** When a channel is disabled automatically. */
export interface DisablePolicy {
  /** Failures within the window that disable a channel. */
  afterFailures: number;
  /** Distinct users whose requests must be among those failures. */
  minUsers: number;
  /** The window, ms. */
  windowMs: number;
}

interface RecentFailure {
  at: number;
  source: string;
}

/**
 * Keeps count of each channel's outcomes and disables a channel automatically when it is failing
 * for several users: within the window, `afterFailures` failures from at least `minUsers` distinct
 * users (or the upstream refusing the channel's key for `minUsers` users). One tenant alone, however
 * its requests are shaped, cannot switch a shared channel off for the others. Only what says
 * something about the channel counts: connection failures, timeouts and 5xx of calls that reached
 * it, and refusals of its key. A refusal of the request (other 4xx) counts as an answer, and a
 * failure the gateway caused itself (a busy slot, `channelAtFault: false`) or met while stopping
 * does not count at all. The reason is recorded; the probe brings the channel back.
 *
 * Failures are remembered in this instance's memory. Successes are counted in memory and written in
 * one statement per channel every flush interval, so the hot path of a healthy channel costs no
 * store write; a failure first writes the channel's pending successes, then itself, so the counts
 * stay in order.
 */
export class ChannelHealth implements BackgroundService {
  readonly name = "channel-health";
  private readonly pending = new Map<number, number>();
  private readonly recent = new Map<number, RecentFailure[]>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly channels: Channels,
    private readonly announce: () => Promise<void>,
    private readonly policy: DisablePolicy,
    private readonly logger: FastifyBaseLogger,
    private readonly flushIntervalMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.timer) return;
    this.stopping = false;
    this.timer = setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Writes the successes counted so far. */
  flush(): Promise<void> {
    return this.serial(async () => {
      const batch = [...this.pending.entries()];
      this.pending.clear();
      for (const [id, n] of batch) await this.channels.recordSuccesses(id, n);
    });
  }

  /** Store writes one after another, so a flush never overtakes a failure or the reverse. */
  private serial(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(step).catch((err) => this.logger.warn({ err }, "could not record channel outcomes"));
    return this.chain;
  }

  /**
   * Reports one upstream call made for `source` (the user whose request it was, `user:<id>`). A
   * `refused` error is the request's fault and counts as an answer of the channel.
   */
  report(channel: Pick<Channel, "id" | "name">, error: UpstreamError | null, source: string): Promise<void> {
    if (!error || error.kind === "refused") {
      this.recent.delete(channel.id);
      this.pending.set(channel.id, (this.pending.get(channel.id) ?? 0) + 1);
      if (!this.timer) return this.flush();
      return Promise.resolve();
    }
    if (!error.channelAtFault || this.stopping) return Promise.resolve();
    const reason = this.noteFailure(channel.id, error, source);
    return this.serial(async () => {
      const successes = this.pending.get(channel.id) ?? 0;
      this.pending.delete(channel.id);
      await this.channels.recordSuccesses(channel.id, successes);
      await this.channels.recordFailure(channel.id, error.message);
      if (reason) await this.disable(channel, reason);
    });
  }

  /** Remembers a failure; returns why the channel must be disabled now, or null. */
  private noteFailure(channelId: number, error: UpstreamError, source: string): string | null {
    const now = this.now();
    const list = (this.recent.get(channelId) ?? []).filter((f) => now - f.at < this.policy.windowMs);
    list.push({ at: now, source });
    this.recent.set(channelId, list);
    const users = new Set(list.map((f) => f.source)).size;
    if (users < this.policy.minUsers) return null;
    const within = `within ${Math.round(this.policy.windowMs / 1000)} s`;
    let reason: string | null = null;
    if (error.kind === "auth") {
      reason = `upstream refused the channel's credentials for ${users} users ${within}: ${error.message}`;
    } else if (list.length >= this.policy.afterFailures) {
      reason = `${list.length} failures for ${users} users ${within}, last: ${error.message}`;
    }
    if (reason) this.recent.delete(channelId);
    return reason;
  }

  private async disable(channel: Pick<Channel, "id" | "name">, reason: string): Promise<void> {
    const current = await this.channels.get(channel.id);
    if (current?.status !== "enabled") return;
    await this.channels.update(channel.id, { status: AUTO_DISABLED, statusReason: reason.slice(0, 500) });
    this.logger.warn({ channelId: channel.id, channel: channel.name, reason }, "channel disabled automatically");
    await this.announce();
  }
}
