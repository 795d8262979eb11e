import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config/load.js";
import type { Channel } from "../core/channel.js";
import type { ChatImage } from "../core/chat/canonical.js";
import type { ChatRelayDeps } from "../core/chat/ports.js";
import type { ContentRelayDeps } from "../core/content/ports.js";
import type { EmbeddingsRelayDeps } from "../core/embeddings/ports.js";
import { embeddingPrice } from "../core/embeddings/price.js";
import { GatewayError } from "../core/errors.js";
import { unixNow } from "../core/ids.js";
import type { MeteredLogRow, MeteringDeps } from "../core/metering/ports.js";
import type { TokenPrice } from "../core/pricing.js";
import type { TokenUsage } from "../core/token-usage.js";
import type { Capability, VendorAdapter } from "../core/vendor-adapter.js";
import { countUpstreamCall } from "../metrics/index.js";
import { fetchImage, ImageFetchError } from "../net/fetch-image.js";
import { GuardedFetchError, type GuardedFetcher } from "../net/guarded-fetch.js";
import type { RelayServices } from "./relay-services.js";

// The one wiring of metered calls (core/metering/) to the gateway's parts: the channels of the
// types that serve a surface, its prices, the ledger, channel health and slots, the request log.

/** The metered surfaces, by what their channel types serve. */
export type MeteredSurface = Extract<Capability, "content" | "chat" | "images" | "embeddings">;

/** What metered calls are wired from. */
export type MeteringServices = RelayServices & {
  config: Pick<Config, "quotaPerUnit" | "content" | "routing" | "charges" | "images" | "bodies">;
};

/** A surface's price of a model: per million tokens, or per image. */
type PriceOf<S extends MeteredSurface> = S extends "images" ? number : TokenPrice;

/** A token-priced call's buckets as request-log columns (none for a call priced otherwise). */
function bucketColumns(b: TokenUsage | null) {
  if (!b) return {};
  return {
    input_tokens: b.input,
    cache_read_tokens: b.cacheRead,
    cache_write_5m_tokens: b.cacheWrite5m,
    cache_write_1h_tokens: b.cacheWrite1h,
    audio_input_tokens: b.audioInput,
    output_tokens: b.output,
    reasoning_tokens: b.reasoning,
    audio_output_tokens: b.audioOutput,
  };
}

/** Writes a metered call's request-log row under its surface's name. */
export function requestLogger(services: Pick<RelayServices, "requestLogs">, surface: MeteredSurface) {
  return (row: MeteredLogRow) =>
    services.requestLogs.log({
      // An image row is dated by its start; a content or chat row by its end, as before.
      created_at: surface === "images" ? Math.floor(row.startedAt / 1000) : unixNow(),
      request_id: row.requestId,
      user_id: row.userId,
      token_id: row.tokenId,
      channel_id: row.channelId,
      surface,
      model: row.model,
      prompt_tokens: row.promptTokens,
      completion_tokens: row.outputTokens,
      cached_tokens: row.cachedTokens,
      ...bucketColumns(row.buckets),
      estimated: row.estimated ? 1 : 0,
      quota: row.quota,
      latency_ms: row.latencyMs,
      status: row.status,
      error: row.error,
    });
}

/**
 * The ports of a metered call on `surface`: the enabled channels of the types that serve it,
 * its prices, the ledger, health reports and slots, the request log. Every metered surface is
 * wired by this one function, plus the ports of its own (its upstream adapters, its downloads).
 */
export function meteringDeps<S extends MeteredSurface>(
  services: MeteringServices,
  surface: S,
  log: FastifyBaseLogger,
): MeteringDeps<Channel, PriceOf<S>> {
  const types = services.vendors.serving(surface);
  const { config, channels, prices, ledger } = services;
  return {
    quotaPerUnit: config.quotaPerUnit,
    maxChannelAttempts: config.routing.maxAttempts,
    chargeOpenMs: config.charges.openMs,
    usageRecordMs: config.charges.usageRecordMs,
    channels: {
      candidates: async (model, group) => {
        const found = await channels.candidates(model, group, types);
        return services.keyPools ? services.keyPools.keyed(found) : found;
      },
      isKnownModel: (model) => channels.isKnownModel(model, types),
      report(channel, error, userId) {
        countUpstreamCall(services.metrics, channel, error);
        // A key refused or out of quota is the key's failure, not the channel's.
        if (services.keyPools?.report(channel, error)) return;
        // Off the hot path: the answer does not wait for the channel's counters.
        void services.health.report(channel, error, `user:${userId}`);
      },
      acquire: (channel) => services.slots.acquire(channel),
    },
    prices: {
      priceOf: (surface === "images"
        ? (model: string) => prices.imagePrice(model)
        : surface === "embeddings"
          ? async (model: string) => embeddingPrice(await prices.contentPrice(model))
          : (model: string) => prices.contentPrice(model)) as (model: string) => Promise<PriceOf<S> | null>,
      groupRatio: (group) => prices.groupRatio(group),
    },
    ledger: {
      charge: (input) => ledger.charge(input),
      settle: (reference, amount, note) => ledger.settle(reference, amount, note),
      refund: (reference, note) => ledger.refund(reference, note),
      noteUsage: (reference, seen, closeBy) => ledger.noteUsage(reference, seen, closeBy),
    },
    ...(services.callLimits ? { limits: services.callLimits } : {}),
    logRequest: requestLogger(services, surface),
    stopping: services.stopping,
    log,
  };
}

/** The adapter of `channel` for `surface`; a channel of another type is a wiring fault. */
function adapterOf<S extends MeteredSurface>(
  services: MeteringServices,
  channel: Channel,
  surface: S,
): NonNullable<VendorAdapter[S]> {
  const adapter = services.vendors.of(channel.type)?.[surface];
  if (!adapter) throw new Error(`channel type ${channel.type} does not serve ${surface}`);
  return adapter as NonNullable<VendorAdapter[S]>;
}

/**
 * An input image the gateway could not bring in, as a 400 naming its field (`field` as told,
 * `param` the field's name): an address it may not fetch, too large, unreachable, not an image.
 * A download refused because the instance holds as many input images as it may is a 503.
 */
export function inputImageFailure(field: string, param: string, err: unknown): GatewayError {
  if (err instanceof GuardedFetchError && err.reason === "busy") {
    return new GatewayError(
      "GW_ERR_BUSY",
      `${field} was not fetched: the gateway is downloading as many input images as it may hold at once; retry shortly. The charge was refunded.`,
      { param, headers: { "retry-after": "5" } },
    );
  }
  if (err instanceof GuardedFetchError) {
    const what =
      err.reason === "blocked"
        ? `points to an address the gateway may not fetch: ${err.message}`
        : err.reason === "too_large"
          ? `is too large: ${err.message}`
          : `could not be fetched: ${err.message}`;
    return new GatewayError("GW_ERR_VALIDATION", `${field} ${what}`, { param });
  }
  if (err instanceof ImageFetchError) {
    return new GatewayError("GW_ERR_VALIDATION", `${field} could not be used: the URL ${err.message}`, { param });
  }
  return new GatewayError("GW_ERR_VALIDATION", `${field} could not be fetched`, { param });
}

/** The content relay (Gemini-native), wired once per gateway. */
export function contentRelayDeps(services: MeteringServices, log: FastifyBaseLogger): ContentRelayDeps<Channel> {
  const content = services.config.content;
  return {
    ...meteringDeps(services, "content", log),
    modelDefaults: {
      maxOutputTokens: content.defaultMaxOutputTokens,
      maxInputTokens: content.defaultMaxInputTokens,
      maxThinkingTokens: content.defaultMaxThinkingTokens,
    },
    // Each channel's call goes to the content adapter of its type.
    upstream: {
      generate: (channel, model, body, signal) =>
        adapterOf(services, channel, "content").generate(channel, model, body, signal),
      openStream: (channel, model, body, signal) =>
        adapterOf(services, channel, "content").openStream(channel, model, body, signal),
      async countTokens(channel, model, body, signal) {
        const adapter = adapterOf(services, channel, "content");
        return adapter.countTokens ? adapter.countTokens(channel, model, body, signal) : null;
      },
    },
  };
}

/** The chat relay (OpenAI's and Anthropic's shapes), with the fetcher of images given by URL. */
export function chatRelayDeps(
  services: MeteringServices,
  log: FastifyBaseLogger,
  fetcher: GuardedFetcher,
): ChatRelayDeps<Channel> {
  const images = services.config.images;
  return {
    ...meteringDeps(services, "chat", log),
    modelMaxOutputTokens: services.config.content.defaultMaxOutputTokens,
    upstreamFor: (channel) => adapterOf(services, channel, "chat"),
    async fetchImage(url, field, signal): Promise<ChatImage> {
      try {
        const image = await fetchImage(fetcher, url, {
          maxBytes: images.maxImageBytes,
          timeoutMs: images.fetchTimeoutMs,
          signal,
        });
        return { mimeType: image.mimeType, data: image.bytes.toString("base64") };
      } catch (err) {
        throw inputImageFailure(field, field, err);
      }
    },
  };
}

/** The embeddings relay (OpenAI's `/v1/embeddings` and Gemini's embedding methods), wired once per gateway. */
export function embeddingsRelayDeps(services: MeteringServices, log: FastifyBaseLogger): EmbeddingsRelayDeps<Channel> {
  return {
    ...meteringDeps(services, "embeddings", log),
    upstreamFor: (channel) => adapterOf(services, channel, "embeddings"),
  };
}
