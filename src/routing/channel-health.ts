import type { FastifyBaseLogger } from "fastify";
import type { UpstreamError } from "../core/upstream-error.js";
import type { Channel, Channels } from "../store/channels.js";

export const AUTO_DISABLED = "auto_disabled";

/**
 * Keeps count of each channel's outcomes and disables a channel automatically: at once when the
 * upstream refuses its key, or after too many consecutive failures. The reason is recorded; the
 * probe brings it back.
 */
export class ChannelHealth {
  constructor(
    private readonly channels: Channels,
    private readonly announce: () => Promise<void>,
    private readonly disableAfterFailures: number,
    private readonly logger: FastifyBaseLogger,
  ) {}

  /** Reports one upstream call. A `refused` error is the request's fault, not the channel's. */
  async report(channel: Pick<Channel, "id" | "name">, error: UpstreamError | null): Promise<void> {
    try {
      if (!error || error.kind === "refused") {
        await this.channels.recordOutcome(channel.id, { ok: true });
        return;
      }
      const failures = await this.channels.recordOutcome(channel.id, { ok: false, error: error.message });
      let reason: string | null = null;
      if (error.kind === "auth") reason = `upstream refused the channel's credentials: ${error.message}`;
      else if (failures >= this.disableAfterFailures) {
        reason = `${failures} consecutive failures, last: ${error.message}`;
      }
      if (reason) await this.disable(channel, reason);
    } catch (err) {
      this.logger.warn({ err, channelId: channel.id }, "could not record channel outcome");
    }
  }

  private async disable(channel: Pick<Channel, "id" | "name">, reason: string): Promise<void> {
    const current = await this.channels.get(channel.id);
    if (!current || current.status !== "enabled") return;
    await this.channels.update(channel.id, { status: AUTO_DISABLED, statusReason: reason.slice(0, 500) });
    this.logger.warn({ channelId: channel.id, channel: channel.name, reason }, "channel disabled automatically");
    await this.announce();
  }
}
