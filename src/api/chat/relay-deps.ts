import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Channel } from "../../core/channel.js";
import type { ChatImage } from "../../core/chat/canonical.js";
import type { ChatRelayDeps, ChatUpstream } from "../../core/chat/ports.js";
import { GatewayError } from "../../core/errors.js";
import { unixNow } from "../../core/ids.js";
import { countUpstreamCall } from "../../metrics/index.js";
import { fetchImage, ImageFetchError } from "../../net/fetch-image.js";
import { GuardedFetchError, type GuardedFetcher } from "../../net/guarded-fetch.js";
import type { TokenAuthDeps } from "../auth-hook.js";
import type { RelayServices } from "../relay-services.js";

/** What the chat surfaces (OpenAI's and Anthropic's shapes) use. */
export type ChatSurfaceDeps = ChatRelayServices & TokenAuthDeps;

/** What the chat relay is wired from. */
export type ChatRelayServices = RelayServices & {
  config: Pick<Config, "quotaPerUnit" | "content" | "routing" | "charges" | "images" | "bodies">;
};

function imageFetchFailure(field: string, err: unknown): GatewayError {
  const param = { param: field };
  if (err instanceof GuardedFetchError) {
    const what =
      err.reason === "blocked"
        ? `points to an address the gateway may not fetch: ${err.message}`
        : err.reason === "too_large"
          ? `is too large: ${err.message}`
          : `could not be fetched: ${err.message}`;
    return new GatewayError("GW_ERR_VALIDATION", `${field} ${what}`, param);
  }
  if (err instanceof ImageFetchError) {
    return new GatewayError("GW_ERR_VALIDATION", `${field} could not be used: the URL ${err.message}`, param);
  }
  return new GatewayError("GW_ERR_VALIDATION", `${field} could not be fetched`, param);
}

/** Wires the chat relay to the gateway's store, price book, ledger, image fetcher and adapters. */
export function chatRelayDeps(
  deps: ChatRelayServices,
  log: FastifyBaseLogger,
  fetcher: GuardedFetcher,
): ChatRelayDeps<Channel> {
  const chatTypes = deps.vendors.serving("chat");
  return {
    quotaPerUnit: deps.config.quotaPerUnit,
    modelMaxOutputTokens: deps.config.content.defaultMaxOutputTokens,
    maxChannelAttempts: deps.config.routing.maxAttempts,
    chargeOpenMs: deps.config.charges.openMs,
    usageRecordMs: deps.config.charges.usageRecordMs,
    channels: {
      candidates: (model, group) => deps.channels.candidates(model, group, chatTypes),
      isKnownModel: (model) => deps.channels.isKnownModel(model, chatTypes),
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
    upstreamFor(channel): ChatUpstream<Channel> {
      const upstream = deps.vendors.of(channel.type)?.chat;
      if (!upstream) throw new Error(`channel type ${channel.type} does not serve chat`);
      return upstream;
    },
    async fetchImage(url, field, signal): Promise<ChatImage> {
      try {
        const image = await fetchImage(fetcher, url, {
          maxBytes: deps.config.images.maxImageBytes,
          timeoutMs: deps.config.images.fetchTimeoutMs,
          signal,
        });
        return { mimeType: image.mimeType, data: image.bytes.toString("base64") };
      } catch (err) {
        throw imageFetchFailure(field, err);
      }
    },
    logRequest: (row) =>
      deps.requestLogs.log({
        created_at: unixNow(),
        request_id: row.requestId,
        user_id: row.userId,
        token_id: row.tokenId,
        channel_id: row.channelId,
        surface: "chat",
        model: row.model,
        prompt_tokens: row.promptTokens,
        completion_tokens: row.outputTokens,
        cached_tokens: row.cachedTokens,
        quota: row.quota,
        latency_ms: row.latencyMs,
        status: row.status,
        error: row.error,
      }),
    stopping: deps.stopping,
    log,
  };
}
