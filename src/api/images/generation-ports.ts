import type { BlobStore } from "../../blobs/blob-store.js";
import type { GatewayContext } from "../../context.js";
import { orderChannels } from "../../core/channel-selection.js";
import { newRequestId } from "../../core/ids.js";
import type { GeneratedImage, GenerateImagesDeps } from "../../core/images/generate-images.js";
import { GatewayError } from "../../errors.js";
import { countUpstreamCall } from "../../metrics/index.js";
import { fetchImage, ImageFetchError } from "../../net/fetch-image.js";
import { GuardedFetchError, type GuardedFetcher } from "../../net/guarded-fetch.js";
import type { Channel, ChannelType } from "../../store/channels.js";
import { generateGeminiImages } from "../../upstreams/gemini/image.js";
import { generateOpenAiImages } from "../../upstreams/openai-images/generate.js";
import { FILES_PATH } from "./files.js";

export const IMAGE_CHANNEL_TYPES: readonly ChannelType[] = ["gemini", "openai-images"];

/** Images an upstream hands back by URL may be far bigger than input images. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;
const RESULT_TIMEOUT_MS = 120_000;

export interface ImagePorts {
  ctx: GatewayContext;
  blobs: BlobStore;
  /** Fetches client-given URLs: private addresses refused unless the operator allows them. */
  guarded: GuardedFetcher;
  /** Fetches URLs on a channel's own host, which the operator configured and so trusts. */
  trusted: GuardedFetcher;
}

function fetchFailure(field: string, err: unknown): GatewayError {
  const param = { param: field };
  if (err instanceof GuardedFetchError) {
    const what =
      err.reason === "blocked"
        ? `points to an address the gateway may not fetch: ${err.message}`
        : err.reason === "too_large"
          ? `is too large: ${err.message}`
          : `could not be fetched: ${err.message}`;
    return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${what}`, param);
  }
  if (err instanceof ImageFetchError) {
    return new GatewayError("GW_ERR_VALIDATION", `body.${field} could not be used: the URL ${err.message}`, param);
  }
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} could not be fetched`, param);
}

/** Wires the image use case to the store, the SSRF-guarded fetchers, the adapters and the blob store. */
export function imagePorts(
  ports: ImagePorts,
  request: { id: string; generatedId: boolean; userId: number },
  record: GenerateImagesDeps<Channel>["record"],
): GenerateImagesDeps<Channel> {
  const { ctx, blobs, guarded, trusted } = ports;
  const limits = { maxBytes: ctx.config.images.maxImageBytes, timeoutMs: ctx.config.images.fetchTimeoutMs };
  const download = async (url: string, options: { trusted: boolean }): Promise<GeneratedImage> =>
    fetchImage(options.trusted ? trusted : guarded, url, { maxBytes: RESULT_MAX_BYTES, timeoutMs: RESULT_TIMEOUT_MS });
  return {
    quotaPerUnit: ctx.config.quotaPerUnit,
    maxImageBytes: ctx.config.images.maxImageBytes,
    maxAttempts: ctx.config.routing.maxAttempts,
    candidates: (model, group) => ctx.channels.candidates(model, group, IMAGE_CHANNEL_TYPES),
    isKnownModel: (model) => ctx.channels.isKnownModel(model, IMAGE_CHANNEL_TYPES),
    imagePrice: (model) => ctx.prices.imagePrice(model),
    groupRatio: (group) => ctx.prices.groupRatio(group),
    orderChannels: (channels) => orderChannels(channels),
    charge: (input) => ctx.ledger.charge(input),
    refund: (reference, note) => ctx.ledger.refund(reference, note),
    settle: (reference, amount, note) => ctx.ledger.settle(reference, amount, note),
    async fetchImage(url, field) {
      try {
        return await fetchImage(guarded, url, limits);
      } catch (err) {
        throw fetchFailure(field, err);
      }
    },
    async generate(channel, call) {
      // One slot of the channel's concurrency limit per request, whatever `n` is.
      const release = await ctx.slots.acquire(channel);
      try {
        if (channel.type === "gemini") return await generateGeminiImages(channel, call);
        return await generateOpenAiImages(channel, call, download);
      } finally {
        release();
      }
    },
    async storeImage(image) {
      const key = await blobs.put(image.bytes, image.mimeType);
      return `${ctx.publicBaseUrl()}/v1${FILES_PATH}/${key}`;
    },
    reportOutcome({ channel, error }) {
      countUpstreamCall(ctx.metrics, channel, error);
      void ctx.health.report(channel, error, `user:${request.userId}`);
    },
    record,
    newReference: () => (request.generatedId ? `image:${request.id}` : `image:${newRequestId()}`),
    nowSeconds: () => Math.floor(Date.now() / 1000),
  };
}
