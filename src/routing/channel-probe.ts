import type { FastifyBaseLogger } from "fastify";
import type { Channel } from "../core/channel.js";
import { PeriodicService } from "../periodic-service.js";
import type { Channels } from "../store/channels.js";
import { callUpstream } from "../upstreams/http.js";
import { AUTO_DISABLED } from "./channel-health.js";

/** A cheap request that tells whether a channel's upstream answers and accepts its key. */
function probeCall(channel: Channel): {
  method: "GET" | "POST";
  url: string;
  headers: Record<string, string>;
  json?: unknown;
} {
  const bearer = { authorization: `Bearer ${channel.key}` };
  switch (channel.type) {
    case "gemini":
      return {
        method: "GET",
        url: `${channel.baseUrl}/v1beta/models?pageSize=1`,
        headers: { "x-goog-api-key": channel.key },
      };
    case "openai-images":
    case "openai-chat":
    case "openai-videos":
      return { method: "GET", url: `${channel.baseUrl}/v1/models`, headers: bearer };
    case "anthropic":
      return {
        method: "GET",
        url: `${channel.baseUrl}/v1/models`,
        headers: { "x-api-key": channel.key, "anthropic-version": "2023-06-01" },
      };
    case "task-relay": {
      const prefix = channel.settings.prefix ?? channel.models[0] ?? "audioa";
      return {
        method: "POST",
        url: `${channel.baseUrl}/${prefix}/fetch`,
        headers: bearer,
        json: { ids: [], action: "MUSIC" },
      };
    }
    case "generate-record":
      return { method: "GET", url: `${channel.baseUrl}/api/v1/generate/record-info?taskId=probe`, headers: bearer };
  }
}

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

/**
 * One cheap call to the channel's upstream (a model list or an empty fetch): ok when the upstream
 * answered and did not refuse the key or fail on its side. The channel's health is not touched.
 */
export async function testChannel(channel: Channel, timeoutMs = 5000, now = Date.now): Promise<ChannelTestResult> {
  const started = now();
  try {
    const res = await callUpstream({
      ...probeCall(channel),
      connectTimeoutMs: channel.settings.connectTimeoutMs,
      timeoutMs,
      firstByteTimeoutMs: timeoutMs,
    });
    await res.body.dump();
    const refused = res.statusCode >= 500 || res.statusCode === 401 || res.statusCode === 403 || res.statusCode === 429;
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
export async function probeChannel(channel: Channel, timeoutMs = 5000): Promise<boolean> {
  return (await testChannel(channel, timeoutMs)).ok;
}

/** Periodically probes automatically disabled channels and re-enables those that recovered. */
export class ChannelProbe extends PeriodicService {
  readonly name = "channel-probe";

  constructor(
    private readonly channels: Channels,
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
      const down = (await this.channels.list()).filter((c) => c.status === AUTO_DISABLED);
      for (const channel of down) {
        if (await probeChannel(channel)) {
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
