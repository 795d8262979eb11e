import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { GatewayError } from "../../core/errors.js";
import { findImageModel } from "../../core/images/catalog.js";
import { generateImages } from "../../core/images/generate-images.js";
import type { MeteredLogRow } from "../../core/metering/ports.js";
import { RequestDownloads } from "../../net/byte-budget.js";
import { type ImagePorts, imageGenerationDeps, refundInterruptedAttempts } from "../../wiring/image-generation.js";
import { requestLogger } from "../../wiring/metering.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { toGatewayError } from "../surfaces.js";
import { ImageGenerationBody, ImagesResponse, imageField } from "./schemas.js";

/** POST /v1/images/generations (Bearer token). */
export async function imageGenerationRoutes(
  base: FastifyInstance,
  opts: { ports: ImagePorts & { deps: TokenAuthDeps } },
) {
  const { deps } = opts.ports;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook("onRequest", requireToken(deps));
  const logRow = requestLogger(deps, "images");

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
      const downloads = new RequestDownloads(opts.ports.inputBytes, deps.config.images.fetchMaxBytesPerRequest);
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
          if (run && run.attempt > 1) await refundInterruptedAttempts(deps, run);
          const ports = imageGenerationDeps(
            opts.ports,
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
