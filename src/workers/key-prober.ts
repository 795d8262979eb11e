import type { FastifyBaseLogger } from "fastify";
import { maskKey } from "../core/key-pool.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import { AUTO_DISABLED } from "../routing/channel-health.js";
import { type ProbeVendors, testChannel } from "../routing/channel-probe.js";
import type { ChannelKeys } from "../store/channel-keys.js";
import type { Channels } from "../store/channels.js";

/**
 * Probes dead keys when their probe is due (the wait doubles after each failed probe, from a
 * minute up to an hour) and revives those the upstream accepts again; a channel switched off
 * automatically is enabled again with its first revived key. Any number of instances
 * may run it: a probe is taken by compare-and-set on its due time, so one instance makes it.
 */
export class KeyProber extends PeriodicService {
  readonly name = "key-prober";

  constructor(
    private readonly keys: ChannelKeys,
    private readonly channels: Channels,
    private readonly vendors: ProbeVendors,
    private readonly announce: () => Promise<void>,
    private readonly everyMs: number,
    private readonly logger: FastifyBaseLogger,
    private readonly probeTimeoutMs = 5000,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.everyMs;
  }

  protected round(): Promise<number[]> {
    return this.runOnce();
  }

  /** One round: probes the keys due. Returns the ids of the keys revived. */
  async runOnce(): Promise<number[]> {
    const revived: number[] = [];
    try {
      for (const key of await this.keys.dueForProbe()) {
        if (!(await this.keys.claimProbe(key))) continue;
        const channel = await this.channels.get(key.channelId);
        if (!channel) continue;
        const probed = { ...channel, key: key.key, keyId: key.id };
        const result = await testChannel(this.vendors, probed, this.probeTimeoutMs, Date.now, { keyProbe: true });
        if (!result.ok) continue;
        await this.keys.revive(key.id);
        revived.push(key.id);
        this.logger.info(
          { channelId: channel.id, channel: channel.name, keyId: key.id, key: maskKey(key.key) },
          "channel key revived after a successful probe",
        );
        // The upstream accepts this key again: a channel switched off automatically serves with it.
        if (channel.status === AUTO_DISABLED) {
          await this.channels.update(channel.id, { status: "enabled", statusReason: "" });
          this.logger.info({ channelId: channel.id, channel: channel.name }, "channel re-enabled: a key is live again");
        }
      }
      if (revived.length > 0) await this.announce();
    } catch (err) {
      this.logger.warn({ err }, "key probe round failed");
    }
    return revived;
  }
}
