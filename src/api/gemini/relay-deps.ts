import type { FastifyBaseLogger } from "fastify";
import type { GatewayContext } from "../../context.js";
import type { Channel } from "../../core/channel.js";
import type { ContentRelayDeps } from "../../core/content/ports.js";
import { unixNow } from "../../core/ids.js";
import { countUpstreamCall } from "../../metrics/index.js";
import { generateContent, openContentStream } from "../../upstreams/gemini/content.js";

const PROTOCOLS = ["gemini"] as const;

/**
 * Wires the content relay to the gateway's store, price book, ledger and Gemini adapter. Built
 * once per gateway: the relay's own log lines name the request they are about.
 */
export function contentRelayDeps(ctx: GatewayContext, log: FastifyBaseLogger): ContentRelayDeps<Channel> {
  return {
    quotaPerUnit: ctx.config.quotaPerUnit,
    modelDefaults: {
      maxOutputTokens: ctx.config.content.defaultMaxOutputTokens,
      maxInputTokens: ctx.config.content.defaultMaxInputTokens,
      maxThinkingTokens: ctx.config.content.defaultMaxThinkingTokens,
    },
    maxChannelAttempts: ctx.config.routing.maxAttempts,
    chargeOpenMs: ctx.config.charges.openMs,
    usageRecordMs: ctx.config.charges.usageRecordMs,
    channels: {
      candidates: (model, group) => ctx.channels.candidates(model, group, PROTOCOLS),
      isKnownModel: (model) => ctx.channels.isKnownModel(model, PROTOCOLS),
      report(channel, error, userId) {
        countUpstreamCall(ctx.metrics, channel, error);
        // Off the hot path: the answer does not wait for the channel's counters.
        void ctx.health.report(channel, error, `user:${userId}`);
      },
      acquire: (channel) => ctx.slots.acquire(channel),
    },
    prices: {
      contentPrice: (model) => ctx.prices.contentPrice(model),
      groupRatio: (group) => ctx.prices.groupRatio(group),
    },
    ledger: {
      charge: (input) => ctx.ledger.charge(input),
      settle: (reference, amount, note) => ctx.ledger.settle(reference, amount, note),
      refund: (reference, note) => ctx.ledger.refund(reference, note),
      noteUsage: (reference, seen, closeBy) => ctx.ledger.noteUsage(reference, seen, closeBy),
    },
    upstream: { generate: generateContent, openStream: openContentStream },
    stopping: ctx.stopping,
    logRequest: (row) =>
      ctx.requestLogs.log({
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
