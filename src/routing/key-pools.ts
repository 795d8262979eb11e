import type { FastifyBaseLogger } from "fastify";
import type { Channel } from "../core/channel.js";
import { isLive, keyDeathReason, keysInTurn, maskKey, type PoolKey } from "../core/key-pool.js";
import type { UpstreamError } from "../core/upstream-error.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import { upstreamOutcome } from "../metrics/upstream.js";
import type { ChannelKeys } from "../store/channel-keys.js";
import type { Channels } from "../store/channels.js";
import { notePoolSecrets } from "../upstreams/secret-scrub.js";
import { AUTO_DISABLED, NO_LIVE_KEY } from "./channel-health.js";

/** Other keys of a channel a call may fail over to after the rotation's pick (besides other channels). */
const SPARE_KEYS = 2;

interface Pending {
  calls: number;
  failures: number;
  lastError: string | null;
}

/**
 * The key pools at work: gives each channel picked for a call a key of its pool (round robin or
 * random over the live keys, per the channel), hears each call's outcome, counts it per key
 * (metrics at once, the store in batches), and marks a key dead when the upstream refused it or
 * said its account is out of quota, while the pool has another live key. The channel stays up on
 * its other keys; the refusal of its last live key is left to channel health, like any other
 * failure of the channel.
 */
export class KeyPools implements BackgroundService {
  readonly name = "key-pools";
  private readonly turns = new Map<number, number>();
  private readonly pending = new Map<number, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private noted: Map<number, PoolKey[]> | null = null;
  /** Keys this instance marked dead since it last read the pools. */
  private readonly killed = new Set<number>();

  constructor(
    private readonly keys: ChannelKeys,
    private readonly channels: Channels,
    private readonly metrics: GatewayMetrics,
    private readonly announce: () => Promise<void>,
    private readonly logger: FastifyBaseLogger,
    private readonly flushIntervalMs = 1000,
    private readonly random: () => number = Math.random,
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

  /**
   * The channels of a call, each carrying the key its rotation picks, followed by up to two
   * other live keys of the same channel at weight 0 (tried after the other channels of the same
   * priority, so a dead key costs the client nothing). A channel without a live key is left out;
   * one without a pool at all keeps its own key.
   */
  async keyed(candidates: readonly Channel[]): Promise<Channel[]> {
    const pools = await this.keys.pools();
    if (pools !== this.noted) {
      // Read again from the store: scrubbing any key of a pool scrubs all of them.
      for (const pool of pools.values()) notePoolSecrets(pool.map((k) => k.key));
      this.noted = pools;
      this.killed.clear();
    }
    const out: Channel[] = [];
    for (const channel of candidates) {
      const pool = pools.get(channel.id);
      if (!pool || pool.length === 0) {
        out.push(channel);
        continue;
      }
      const turn = this.turns.get(channel.id) ?? 0;
      this.turns.set(channel.id, turn + 1);
      const inTurn = keysInTurn(pool, channel.keyRotation, turn, this.random);
      inTurn.slice(0, 1 + SPARE_KEYS).forEach((key, i) => {
        out.push({ ...channel, key: key.key, keyId: key.id, weight: i === 0 ? channel.weight : 0 });
      });
    }
    return out;
  }

  /**
   * Hears one call's outcome on a keyed channel. True when the failure was the key's (it is
   * marked dead): channel health should not count it against the channel.
   */
  report(channel: Pick<Channel, "id" | "name" | "keyId">, error: UpstreamError | null): boolean {
    if (channel.keyId === undefined) return false;
    const keyId = channel.keyId;
    this.metrics.upstreamKeyCalls.inc({
      channel: String(channel.id),
      key: String(keyId),
      outcome: upstreamOutcome(error),
    });
    const counted = error !== null && error.kind !== "refused" && error.channelAtFault;
    const pending = this.pending.get(keyId) ?? { calls: 0, failures: 0, lastError: null };
    pending.calls += 1;
    if (counted) {
      pending.failures += 1;
      pending.lastError = error.message;
    }
    this.pending.set(keyId, pending);
    if (!this.timer) void this.flush();
    const reason = error ? keyDeathReason(error) : null;
    if (!reason || !this.hasOtherLiveKey(channel.id, keyId)) return false;
    this.killed.add(keyId);
    void this.serial(() => this.kill(channel, keyId, reason));
    return true;
  }

  /**
   * Whether the pool (as this instance last read it) has a live key besides `keyId`. The last
   * live key is not marked dead by a call: its refusal is the channel's, judged by channel health
   * (several users before the channel is switched off), so one tenant cannot take a channel down.
   */
  private hasOtherLiveKey(channelId: number, keyId: number): boolean {
    return (this.noted?.get(channelId) ?? []).some((k) => k.id !== keyId && isLive(k) && !this.killed.has(k.id));
  }

  /** Writes the counters gathered so far. */
  flush(): Promise<void> {
    return this.serial(async () => {
      const batch = [...this.pending.entries()];
      this.pending.clear();
      for (const [keyId, p] of batch) await this.keys.recordCalls(keyId, p.calls, p.failures, p.lastError);
    });
  }

  private serial(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(step).catch((err) => this.logger.warn({ err }, "could not record key outcomes"));
    return this.chain;
  }

  private async kill(channel: Pick<Channel, "id" | "name">, keyId: number, reason: string): Promise<void> {
    if (!(await this.keys.markDead(keyId, reason))) return;
    const pool = await this.keys.listFor(channel.id);
    const key = pool.find((k) => k.id === keyId);
    this.logger.warn(
      { channelId: channel.id, channel: channel.name, keyId, key: key ? maskKey(key.key) : null, reason },
      "channel key marked dead",
    );
    if (!pool.some(isLive)) {
      const current = await this.channels.get(channel.id);
      if (current?.status === "enabled") {
        await this.channels.update(channel.id, { status: AUTO_DISABLED, statusReason: NO_LIVE_KEY });
        this.logger.warn({ channelId: channel.id, channel: channel.name }, "channel disabled: no live key");
      }
    }
    await this.announce();
  }
}
