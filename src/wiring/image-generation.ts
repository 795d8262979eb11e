import type { FastifyBaseLogger } from "fastify";
import type { ImageGenerationWiring } from "../api/images/generations.js";
import type { ImageSurfaceParts } from "../api/images/index.js";
import type { Channel } from "../core/channel.js";
import { newRequestId } from "../core/ids.js";
import type { GenerateImagesDeps } from "../core/images/generate-images.js";
import type { GeneratedImage } from "../core/images/image-upstream.js";
import type { MeteredLogRow } from "../core/metering/ports.js";
import type { IdempotencyKeys, IdempotentRun } from "../idempotency/idempotency-keys.js";
import type { RequestDownloads } from "../net/byte-budget.js";
import { fetchImage } from "../net/fetch-image.js";
import type { UserImages } from "../store/user-images.js";
import { inputImageFailure, type MeteringServices, meteringDeps, requestLogger } from "./metering.js";

/** Images an upstream hands back by URL may be far bigger than input images. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;
const RESULT_TIMEOUT_MS = 120_000;

/** What image generation is wired from. */
export type ImageGenerationServices = MeteringServices & {
  /** Remembered answers of generations sent with an `Idempotency-Key` header. */
  idempotency: IdempotencyKeys;
  /** Absolute base URL of the links to stored images. */
  publicBaseUrl(): string;
  /** Where a user's delivered image URLs are kept for the console's image list. */
  userImages: Pick<UserImages, "add">;
};

/** The images surface's parts, with the services a generation is wired from. */
export interface ImagePorts extends ImageSurfaceParts {
  deps: ImageGenerationServices;
}

/** The images surface's wiring of its generations (the request log, refunds, the engine's ports). */
export function imageGenerationWiring(deps: ImageGenerationServices, parts: ImageSurfaceParts): ImageGenerationWiring {
  const ports: ImagePorts = { ...parts, deps };
  return {
    logRow: requestLogger(deps, "images"),
    refundInterruptedAttempts: (run) => refundInterruptedAttempts(deps, run),
    generationDeps: (request, logRequest, downloads, run) =>
      imageGenerationDeps(ports, request, logRequest, downloads, run),
  };
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
  deps: Pick<ImageGenerationServices, "ledger"> & { logger: Pick<FastifyBaseLogger, "warn"> },
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

/**
 * Wires one generation to the metered-call ports (meteringDeps), the SSRF-guarded fetchers, the
 * image adapters and the blob store.
 */
export function imageGenerationDeps(
  ports: ImagePorts,
  request: { id: string; generatedId: boolean; userId: number },
  /** Writes the call's request-log row. */
  logRequest: (row: MeteredLogRow) => void,
  /** The request's input-image downloads, bounded per request and per instance. */
  downloads: RequestDownloads,
  /** The Idempotency-Key run, if any: the charge reference is tied to it. */
  run: IdempotentRun | null = null,
): GenerateImagesDeps<Channel> {
  const { deps, blobs, guarded, trusted } = ports;
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
    ...meteringDeps(deps, "images", deps.logger),
    logRequest,
    maxImageBytes: deps.config.images.maxImageBytes,
    async fetchImage(url, field) {
      try {
        return await fetchImage(guarded, url, limits());
      } catch (err) {
        throw inputImageFailure(`body.${field}`, field, err);
      }
    },
    generate(channel, call) {
      const upstream = deps.vendors.of(channel.type)?.images;
      if (!upstream) throw new Error(`channel type ${channel.type} does not serve images`);
      return upstream.generate(channel, call, download);
    },
    async storeImage(image) {
      const key = await blobs.put(image.bytes, image.mimeType);
      const url = `${deps.publicBaseUrl()}/v1${ports.filesPath}/${key}`;
      stored.push(url);
      return url;
    },
    async listDelivered(model) {
      if (stored.length === 0) return;
      await deps.userImages
        .add(request.userId, model, stored.splice(0), Math.floor(Date.now() / 1000))
        .catch((err) => deps.logger.warn({ err }, "a generated image was not added to the user's image list"));
    },
    newReference: () =>
      run ? imageRunReference(run) : request.generatedId ? `image:${request.id}` : `image:${newRequestId()}`,
    nowSeconds: () => Math.floor(Date.now() / 1000),
  };
}
