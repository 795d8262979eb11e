import type { BlobStore } from "../../blobs/blob-store.js";
import type { Config } from "../../config.js";
import type { Channel } from "../../core/channel.js";
import { orderChannels } from "../../core/channel-selection.js";
import { GatewayError } from "../../core/errors.js";
import { newRequestId } from "../../core/ids.js";
import type { GeneratedImage, GenerateImagesDeps } from "../../core/images/generate-images.js";
import type { IdempotencyKeys, IdempotentRun } from "../../idempotency/idempotency-keys.js";
import { countUpstreamCall } from "../../metrics/index.js";
import type { ByteBudget, RequestDownloads } from "../../net/byte-budget.js";
import { fetchImage, ImageFetchError } from "../../net/fetch-image.js";
import { GuardedFetchError, type GuardedFetcher } from "../../net/guarded-fetch.js";
import type { UserImages } from "../../store/user-images.js";
import type { TokenAuthDeps } from "../auth-hook.js";
import type { RelayServices } from "../relay-services.js";
import { FILES_PATH } from "./files.js";

/** Images an upstream hands back by URL may be far bigger than input images. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;
const RESULT_TIMEOUT_MS = 120_000;

/** What the images surface uses. */
export type ImageSurfaceDeps = RelayServices &
  TokenAuthDeps & {
    config: Pick<Config, "quotaPerUnit" | "images" | "routing" | "bodies" | "dataDir">;
    /** Remembered answers of generations sent with an `Idempotency-Key` header. */
    idempotency: IdempotencyKeys;
    /** Absolute base URL of the links to stored images. */
    publicBaseUrl(): string;
    /** Where a user's delivered image URLs are kept for the console's image list. */
    userImages: Pick<UserImages, "add">;
  };

export interface ImagePorts {
  deps: ImageSurfaceDeps;
  blobs: BlobStore;
  /** Fetches client-given URLs: private addresses refused unless the operator allows them. */
  guarded: GuardedFetcher;
  /** Fetches URLs on a channel's own host, which the operator configured and so trusts. */
  trusted: GuardedFetcher;
  /** Bytes of input images all requests of this instance may hold at once. */
  inputBytes: ByteBudget;
}

function fetchFailure(field: string, err: unknown): GatewayError {
  const param = { param: field };
  if (err instanceof GuardedFetchError && err.reason === "busy") {
    return new GatewayError(
      "GW_ERR_BUSY",
      `body.${field} was not fetched: the gateway is downloading as many input images as it may hold at once; retry shortly. The charge was refunded.`,
      { ...param, headers: { "retry-after": "5" } },
    );
  }
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

/** The ledger reference of one attempt of an Idempotency-Key's run. */
export function imageRunReference(run: IdempotentRun): string {
  return run.attempt === 1 ? `image:${run.runId}` : `image:${run.runId}/${run.attempt}`;
}

/**
 * Before a retry runs an Idempotency-Key again (its earlier attempt's instance died), the earlier
 * attempts' charges are refunded: their client never got an answer. A refund happens at most once
 * per reference, and an attempt that charged nothing has nothing to refund, so the key ends with
 * at most the one charge of the attempt that answers.
 */
export async function refundInterruptedAttempts(
  deps: Pick<ImageSurfaceDeps, "ledger" | "logger">,
  run: IdempotentRun,
): Promise<void> {
  for (let attempt = 1; attempt < run.attempt; attempt++) {
    const outcome = await deps.ledger.refund(
      imageRunReference({ runId: run.runId, attempt }),
      "interrupted attempt: its instance stopped; the request ran again under the same Idempotency-Key",
    );
    if (outcome.applied) {
      deps.logger.warn(
        { runId: run.runId, attempt, refunded: outcome.amount },
        "refunded an interrupted image attempt",
      );
    }
  }
}

/** Wires the image use case to the store, the SSRF-guarded fetchers, the adapters and the blob store. */
export function imagePorts(
  ports: ImagePorts,
  request: { id: string; generatedId: boolean; userId: number },
  record: GenerateImagesDeps<Channel>["record"],
  /** The request's input-image downloads, bounded per request and per instance. */
  downloads: RequestDownloads,
  /** The Idempotency-Key run, if any: the charge reference is tied to it. */
  run: IdempotentRun | null = null,
): GenerateImagesDeps<Channel> {
  const { deps, blobs, guarded, trusted } = ports;
  const imageTypes = deps.vendors.serving("images");
  // Built when an input image is fetched: the request's download signal is made only then.
  const limits = () => ({
    maxBytes: deps.config.images.maxImageBytes,
    timeoutMs: deps.config.images.fetchTimeoutMs,
    signal: downloads.signal,
    onBytes: (bytes: number) => downloads.take(bytes),
  });
  // Stored images of this request, added to the user's image list before the answer (listDelivered).
  const stored: string[] = [];
  const download = async (url: string, options: { trusted: boolean }): Promise<GeneratedImage> =>
    fetchImage(options.trusted ? trusted : guarded, url, { maxBytes: RESULT_MAX_BYTES, timeoutMs: RESULT_TIMEOUT_MS });
  return {
    quotaPerUnit: deps.config.quotaPerUnit,
    maxImageBytes: deps.config.images.maxImageBytes,
    maxAttempts: deps.config.routing.maxAttempts,
    candidates: (model, group) => deps.channels.candidates(model, group, imageTypes),
    isKnownModel: (model) => deps.channels.isKnownModel(model, imageTypes),
    imagePrice: (model) => deps.prices.imagePrice(model),
    groupRatio: (group) => deps.prices.groupRatio(group),
    orderChannels: (channels) => orderChannels(channels),
    charge: (input) => deps.ledger.charge(input),
    refund: (reference, note) => deps.ledger.refund(reference, note),
    settle: (reference, amount, note) => deps.ledger.settle(reference, amount, note),
    noteDelivered: (reference, amount) => deps.ledger.noteUsage(reference, amount, Date.now()),
    warn: (obj, msg) => deps.logger.warn(obj, msg),
    async fetchImage(url, field) {
      try {
        return await fetchImage(guarded, url, limits());
      } catch (err) {
        throw fetchFailure(field, err);
      }
    },
    async generate(channel, call) {
      const upstream = deps.vendors.of(channel.type)?.images;
      if (!upstream) throw new Error(`channel type ${channel.type} does not serve images`);
      // One slot of the channel's concurrency limit per request, whatever `n` is.
      const release = await deps.slots.acquire(channel);
      try {
        return await upstream.generate(channel, call, download);
      } finally {
        release();
      }
    },
    async storeImage(image) {
      const key = await blobs.put(image.bytes, image.mimeType);
      const url = `${deps.publicBaseUrl()}/v1${FILES_PATH}/${key}`;
      stored.push(url);
      return url;
    },
    reportOutcome({ channel, error }) {
      countUpstreamCall(deps.metrics, channel, error);
      void deps.health.report(channel, error, `user:${request.userId}`);
    },
    async listDelivered(model) {
      if (stored.length === 0) return;
      await deps.userImages
        .add(request.userId, model, stored.splice(0), Math.floor(Date.now() / 1000))
        .catch((err) => deps.logger.warn({ err }, "a generated image was not added to the user's image list"));
    },
    record,
    newReference: () =>
      run ? imageRunReference(run) : request.generatedId ? `image:${request.id}` : `image:${newRequestId()}`,
    nowSeconds: () => Math.floor(Date.now() / 1000),
  };
}
