import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Channel } from "../../core/channel.js";
import type { ContentRelayDeps, ContentUpstream } from "../../core/content/ports.js";
import { unixNow } from "../../core/ids.js";
import { countUpstreamCall } from "../../metrics/index.js";
import type { TokenAuthDeps } from "../auth-hook.js";
import type { ModelCatalogDeps } from "../models/catalog.js";
import type { RelayServices } from "../relay-services.js";

/** What the Gemini-native content surface uses. */
export type ContentSurfaceDeps = RelayServices &
  TokenAuthDeps &
  ModelCatalogDeps & { config: Pick<Config, "quotaPerUnit" | "content" | "routing" | "charges" | "bodies"> };

/**
 * Wires the content relay to the gateway's store, price book, ledger and content adapters. Built
 * once per gateway: the relay's own log lines name the request they are about.
 */
export function contentRelayDeps(deps: ContentSurfaceDeps, log: FastifyBaseLogger): ContentRelayDeps<Channel> {
  const contentTypes = deps.vendors.serving("content");
  const adapterOf = (channel: Channel): ContentUpstream<Channel> => {
    const upstream = deps.vendors.of(channel.type)?.content;
    if (!upstream) throw new Error(`channel type ${channel.type} does not serve content`);
    return upstream;
  };
  return {
    quotaPerUnit: deps.config.quotaPerUnit,
    modelDefaults: {
      maxOutputTokens: deps.config.content.defaultMaxOutputTokens,
      maxInputTokens: deps.config.content.defaultMaxInputTokens,
      maxThinkingTokens: deps.config.content.defaultMaxThinkingTokens,
    },
    maxChannelAttempts: deps.config.routing.maxAttempts,
    chargeOpenMs: deps.config.charges.openMs,
    usageRecordMs: deps.config.charges.usageRecordMs,
    channels: {
      candidates: (model, group) => deps.channels.candidates(model, group, contentTypes),
      isKnownModel: (model) => deps.channels.isKnownModel(model, contentTypes),
      report(channel, error, userId) {
        countUpstreamCall(deps.metrics, channel, error);
        // Off the hot path: the answer does not wait for the channel's counters.
        void deps.health.report(channel, error, `user:${userId}`);
      },
      acquire: (channel) => deps.slots.acquire(channel),
    },
    prices: {
      contentPrice: (model) => deps.prices.contentPrice(model),
      groupRatio: (group) => deps.prices.groupRatio(group),
    },
    ledger: {
      charge: (input) => deps.ledger.charge(input),
      settle: (reference, amount, note) => deps.ledger.settle(reference, amount, note),
      refund: (reference, note) => deps.ledger.refund(reference, note),
      noteUsage: (reference, seen, closeBy) => deps.ledger.noteUsage(reference, seen, closeBy),
    },
    // Each channel's call goes to the content adapter of its type.
    upstream: {
      generate: (channel, model, body, signal) => adapterOf(channel).generate(channel, model, body, signal),
      openStream: (channel, model, body, signal) => adapterOf(channel).openStream(channel, model, body, signal),
    },
    stopping: deps.stopping,
    logRequest: (row) =>
      deps.requestLogs.log({
        created_at: unixNow(),
        request_id: row.requestId,
        user_id: row.userId,
        token_id: row.tokenId,
        channel_id: row.channelId,
        surface: "content",
        model: row.model,
        prompt_tokens: row.promptTokens,
        completion_tokens: row.outputTokens,
        cached_tokens: row.cachedTokens,
        quota: row.quota,
        latency_ms: row.latencyMs,
        status: row.status,
        error: row.error,
      }),
    log,
  };
}
