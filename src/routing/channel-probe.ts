import type { FastifyBaseLogger } from "fastify";
import type { Channel } from "../core/channel.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { Channels } from "../store/channels.js";
import { callUpstream } from "../upstreams/http.js";
import { AUTO_DISABLED, NO_LIVE_KEY } from "./channel-health.js";

/** What one probe of a channel found; `error` never holds the channel's key. */
export interface ChannelTestResult {
  ok: boolean;
  latencyMs: number;
  error: string | null;
}

/** The key blanked out of a text an upstream or the network wrote. */
function withoutKey(text: string, key: string): string {
  return key.length >= 4 ? text.split(key).join("[key]") : text;
}

/** The vendors whose probes test channels. */
export type ProbeVendors = Pick<VendorRegistry, "of">;

/**
 * One cheap call to the channel's upstream, the probe of its type's vendor adapter (a model list
 * or an empty fetch): ok when the upstream answered and did not refuse the key or fail on its
 * side (`keyProbe`: nor answered 400 or 402, which refuse a key). The channel's health is not touched.
 */
export async function testChannel(
  vendors: ProbeVendors,
  channel: Channel,
  timeoutMs = 5000,
  now = Date.now,
  options: { keyProbe?: boolean } = {},
): Promise<ChannelTestResult> {
  const started = now();
  const vendor = vendors.of(channel.type);
  if (!vendor) return { ok: false, latencyMs: 0, error: `no vendor speaks the channel type ${channel.type}` };
  try {
    const res = await callUpstream({
      ...vendor.probe(channel),
      connectTimeoutMs: channel.settings.connectTimeoutMs,
      timeoutMs,
      firstByteTimeoutMs: timeoutMs,
    });
    await res.body.dump();
    // A key's probe asks more: a 400 (Gemini's answer to a bad key) or a 402 refuses it too.
    const refused =
      res.statusCode >= 500 ||
      res.statusCode === 401 ||
      res.statusCode === 403 ||
      res.statusCode === 429 ||
      (options.keyProbe === true && (res.statusCode === 400 || res.statusCode === 402));
    return {
      ok: !refused,
      latencyMs: Math.max(0, now() - started),
      error: refused ? `the upstream answered HTTP ${res.statusCode}` : null,
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      latencyMs: Math.max(0, now() - started),
      error: withoutKey(message, channel.key).slice(0, 500),
    };
  }
}

/** True when the upstream answered and did not refuse the key or fail on its side. */
export async function probeChannel(vendors: ProbeVendors, channel: Channel, timeoutMs = 5000): Promise<boolean> {
  return (await testChannel(vendors, channel, timeoutMs)).ok;
}

/** Periodically probes automatically disabled channels and re-enables those that recovered. */
export class ChannelProbe extends PeriodicService {
  readonly name = "channel-probe";

  constructor(
    private readonly channels: Channels,
    private readonly vendors: ProbeVendors,
    private readonly announce: () => Promise<void>,
    private readonly everyMs: number,
    private readonly logger: FastifyBaseLogger,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.everyMs;
  }

  protected round(): Promise<number[]> {
    return this.runOnce();
  }

  /** One round: probe every automatically disabled channel. Returns the ids re-enabled. */
  async runOnce(): Promise<number[]> {
    const revived: number[] = [];
    try {
      // A channel down for want of a live key comes back with a key the key prober revives.
      const down = (await this.channels.list()).filter(
        (c) => c.status === AUTO_DISABLED && c.statusReason !== NO_LIVE_KEY,
      );
      for (const channel of down) {
        if (await probeChannel(this.vendors, channel)) {
          await this.channels.update(channel.id, { status: "enabled", statusReason: "" });
          revived.push(channel.id);
          this.logger.info(
            { channelId: channel.id, channel: channel.name },
            "channel re-enabled after a successful probe",
          );
        }
      }
      if (revived.length > 0) await this.announce();
    } catch (err) {
      this.logger.warn({ err }, "channel probe round failed");
    }
    return revived;
  }
}
