import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import type { Channel } from "../../core/channel.js";
import { GatewayError } from "../../core/errors.js";
import { findImageModel } from "../../core/images/catalog.js";
import { type GenerateImagesDeps, generateImages } from "../../core/images/generate-images.js";
import type { MeteredLogRow } from "../../core/metering/ports.js";
import { toGatewayError } from "../../http/surfaces.js";
import type { IdempotencyKeys, IdempotentRun } from "../../idempotency/idempotency-keys.js";
import { type ByteBudget, RequestDownloads } from "../../net/byte-budget.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { ImageGenerationBody, ImagesResponse, imageField } from "./schemas.js";

/** What one generation is wired to (by the app: the metered-call engine, the upstreams, the store). */
export interface ImageGenerationWiring {
  /** Writes a generation's request-log row. */
  logRow(row: MeteredLogRow): void;
  /** Refunds the charges of a key's earlier attempts whose instance stopped (see idempotent-route). */
  refundInterruptedAttempts(run: IdempotentRun): Promise<void>;
  /** The engine's ports for one generation. */
  generationDeps(
    request: { id: string; generatedId: boolean; userId: number },
    logRequest: (row: MeteredLogRow) => void,
    downloads: RequestDownloads,
    run: IdempotentRun | null,
  ): GenerateImagesDeps<Channel>;
}

/** What the generation route uses. */
export type ImageGenerationRouteDeps = TokenAuthDeps & {
  config: { images: { fetchMaxBytesPerRequest: number } };
  idempotency: IdempotencyKeys;
};

/** POST /v1/images/generations (Bearer token). */
export async function imageGenerationRoutes(
  base: FastifyInstance,
  opts: { deps: ImageGenerationRouteDeps; wiring: ImageGenerationWiring; inputBytes: ByteBudget },
) {
  const { deps, wiring } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook("onRequest", requireToken(deps));
  const logRow = (row: MeteredLogRow) => wiring.logRow(row);

  app.post(
    "/images/generations",
    {
      schema: {
        summary: "Generate images",
        body: ImageGenerationBody,
        headers: IdempotencyHeaders,
        response: { 200: ImagesResponse },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const started = Date.now();
      let recorded = false;
      const record = (row: MeteredLogRow) => {
        recorded = true;
        logRow(row);
      };
      // Input images stay in memory until the request ends; their bytes are given back then.
      const downloads = new RequestDownloads(opts.inputBytes, deps.config.images.fetchMaxBytesPerRequest);
      try {
        if (body.stream === true) {
          throw new GatewayError("GW_ERR_VALIDATION", "body.stream is not supported; omit it or set it to false", {
            param: "stream",
          });
        }
        const image = imageField(body.image);
        const catalog = findImageModel(body.model);
        if (catalog) assertModelAllowed(principal, catalog.name);
        // With an Idempotency-Key the answer is kept as sent (b64_json answers included) and
        // replayed: the same image URLs, no second generation, no second charge. A retry after
        // the instance running the key died runs it again, and its charge replaces the earlier's.
        return await answerIdempotently(deps.idempotency, request, reply, async (run) => {
          if (run && run.attempt > 1) await wiring.refundInterruptedAttempts(run);
          const ports = wiring.generationDeps(
            { id: request.id, generatedId: request.headers["x-request-id"] !== request.id, userId: principal.userId },
            record,
            downloads,
            run,
          );
          return {
            status: 200,
            body: await generateImages(ports, {
              requestId: request.id,
              userId: principal.userId,
              tokenId: principal.tokenId,
              group: principal.group,
              model: body.model,
              prompt: body.prompt,
              image,
              aspectRatio: body.aspect_ratio,
              n: body.n ?? 1,
              responseFormat: body.response_format ?? "url",
            }),
          };
        });
      } catch (err) {
        if (!recorded) {
          const gwError = toGatewayError(err);
          record({
            requestId: request.id,
            userId: principal.userId,
            tokenId: principal.tokenId,
            channelId: null,
            model: findImageModel(body.model)?.name ?? body.model,
            promptTokens: 0,
            outputTokens: 0,
            cachedTokens: 0,
            buckets: null,
            estimated: false,
            quota: 0,
            startedAt: started,
            latencyMs: Date.now() - started,
            status: gwError.status,
            error: gwError.message,
          });
        }
        throw err;
      } finally {
        downloads.close();
      }
    },
  );
}
