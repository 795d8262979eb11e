import type { FastifyBaseLogger } from "fastify";
import type { BackgroundService } from "../background-service.js";
import type { UpstreamError } from "../core/upstream-error.js";
import type { Channel, Channels } from "../store/channels.js";

export const AUTO_DISABLED = "auto_disabled";

/**
 * Keeps count of each channel's outcomes and disables a channel automatically: at once when the
 * upstream refuses its key, or after too many consecutive failures. The reason is recorded; the
 * probe brings it back.
 *
 * Successes are counted in memory and written in one statement per channel every flush interval,
 * so the hot path of a healthy channel costs no store write; a failure first writes the channel's
 * pending successes, then itself, so the counts stay in order.
 */
export class ChannelHealth implements BackgroundService {
  readonly name = "channel-health";
  private readonly pending = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly channels: Channels,
    private readonly announce: () => Promise<void>,
    private readonly disableAfterFailures: number,
    private readonly logger: FastifyBaseLogger,
    private readonly flushIntervalMs = 1000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
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

  /** Reports one upstream call. A `refused` error is the request's fault, not the channel's. */
  report(channel: Pick<Channel, "id" | "name">, error: UpstreamError | null): Promise<void> {
    if (!error || error.kind === "refused") {
      this.pending.set(channel.id, (this.pending.get(channel.id) ?? 0) + 1);
      if (!this.timer) return this.flush();
      return Promise.resolve();
    }
    return this.serial(async () => {
      const successes = this.pending.get(channel.id) ?? 0;
      this.pending.delete(channel.id);
      await this.channels.recordSuccesses(channel.id, successes);
      const failures = await this.channels.recordFailure(channel.id, error.message);
      let reason: string | null = null;
      if (error.kind === "auth") reason = `upstream refused the channel's credentials: ${error.message}`;
      else if (failures >= this.disableAfterFailures) {
        reason = `${failures} consecutive failures, last: ${error.message}`;
      }
      if (reason) await this.disable(channel, reason);
    });
  }

  private async disable(channel: Pick<Channel, "id" | "name">, reason: string): Promise<void> {
    const current = await this.channels.get(channel.id);
    if (current?.status !== "enabled") return;
    await this.channels.update(channel.id, { status: AUTO_DISABLED, statusReason: reason.slice(0, 500) });
    this.logger.warn({ channelId: channel.id, channel: channel.name, reason }, "channel disabled automatically");
    await this.announce();
  }
}
