import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { GatewayError } from "../../core/errors.js";
import { findImageModel } from "../../core/images/catalog.js";
import { generateImages, type ImageCallRecord } from "../../core/images/generate-images.js";
import { RequestDownloads } from "../../net/byte-budget.js";
import { principalOf, requireToken } from "../auth-hook.js";
import { answerIdempotently, IdempotencyHeaders } from "../idempotent-route.js";
import { toGatewayError } from "../surfaces.js";
import { type ImagePorts, imagePorts, refundInterruptedAttempts } from "./generation-ports.js";
import { ImageGenerationBody, ImagesResponse, imageField } from "./schemas.js";

/** POST /v1/images/generations (Bearer token). */
export async function imageGenerationRoutes(base: FastifyInstance, opts: { ports: ImagePorts }) {
  const { deps } = opts.ports;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook("onRequest", requireToken(deps));

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
      const record = (entry: ImageCallRecord) => {
        recorded = true;
        deps.requestLogs.log({
          created_at: Math.floor(started / 1000),
          request_id: request.id,
          user_id: principal.userId,
          token_id: principal.tokenId,
          channel_id: entry.channelId,
          surface: "images",
          model: entry.model,
          // Images delivered; the token columns have no meaning for images.
          prompt_tokens: 0,
          completion_tokens: entry.images,
          cached_tokens: 0,
          quota: entry.quota,
          latency_ms: Date.now() - started,
          status: entry.status,
          error: entry.error,
        });
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
          const ports = imagePorts(
            opts.ports,
            { id: request.id, generatedId: request.headers["x-request-id"] !== request.id, userId: principal.userId },
            record,
            downloads,
            run,
          );
          return {
            status: 200,
            body: await generateImages(ports, {
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
            model: findImageModel(body.model)?.name ?? body.model,
            channelId: null,
            quota: 0,
            images: 0,
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
