import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import type { Channel } from "../../core/channel.js";
import { countContentTokens } from "../../core/content/count-tokens.js";
import type { ContentCall, ContentRelayDeps } from "../../core/content/ports.js";
import { generateContentCall, streamContentCall } from "../../core/content/relay.js";
import type { EmbeddingsRelayDeps } from "../../core/embeddings/ports.js";
import { GatewayError } from "../../core/errors.js";
import { newRequestId } from "../../core/ids.js";
import { type BodyBounds, bodyTextOf, installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import type { ModelCatalogDeps } from "../model-catalog.js";
import { errorShapeOf } from "../route-table.js";
import { TOKEN_COUNT_HEADER } from "../token-count-header.js";
import { geminiEmbedRoutes } from "./embed.js";
import { forwardableText } from "./forwardable-body.js";
import { assertContentModel, type ContentModelDeps, geminiModelRoutes } from "./models.js";
import { ContentAnswer, ContentQuery, GenerateContentBody, ModelParams } from "./schemas.js";
import { clientStreamSink } from "./stream-sink.js";

/** What the Gemini-native content surface uses. */
export type ContentSurfaceDeps = TokenAuthDeps &
  ModelCatalogDeps &
  ContentModelDeps &
  Parameters<typeof assertContentModel>[0] & {
    config: { bodies: { content: BodyBounds } };
    /** Set while the gateway stops: a stream in flight ends then. */
    stopping?: AbortSignal;
  };

const METHODS = ["generateContent", "streamGenerateContent", "countTokens"] as const;
type Method = (typeof METHODS)[number];

/** `gemini-2.5-flash:streamGenerateContent` -> model and method (split at the last colon). */
export function splitTarget(target: string): { model: string; method: string } {
  const sep = target.lastIndexOf(":");
  return sep > 0 ? { model: target.slice(0, sep), method: target.slice(sep + 1) } : { model: target, method: "" };
}

/** Refuses an unknown method before the body is validated: the route does not exist. */
async function knownMethod(request: FastifyRequest) {
  const { model, method } = splitTarget((request.params as { target: string }).target);
  if (!(METHODS as readonly string[]).includes(method)) {
    throw new GatewayError("GW_ERR_ROUTE_NOT_FOUND", `Method "${method}" of models/${model} is not found.`);
  }
}

/** The ledger reference of a call: the request id, unless the client chose that id itself. */
function billingReference(request: FastifyRequest): string {
  const chosenByClient = request.headers["x-request-id"] === request.id;
  return `content:${chosenByClient ? newRequestId() : request.id}`;
}

/**
 * Size of the request body in bytes: its Content-Length (Fastify refuses a body of another
 * length), else the size of its JSON (a chunked upload).
 */
function bodyBytesOf(request: FastifyRequest): number {
  const length = Number(request.headers["content-length"]);
  return Number.isSafeInteger(length) && length >= 0 ? length : Buffer.byteLength(JSON.stringify(request.body));
}

/** Gemini-native content surface under /v1beta (Google error shape). */
export async function geminiRoutes(
  base: FastifyInstance,
  opts: {
    deps: ContentSurfaceDeps /** The metered-call engine's ports, wired by the app. */;
    relay: ContentRelayDeps<Channel>;
    /** The embedding methods' ports, wired by the app. */
    embeddings: EmbeddingsRelayDeps<Channel>;
  },
) {
  const { deps, relay } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  installSurface(app, errorShapeOf(app.prefix));
  app.addHook("onRequest", requireToken(deps));
  // Whatever the content type says, the body must be JSON (Google's API reads it so too).
  installInputBounds(app, deps.config.bodies.content, { anyContentType: true, emptyBody: "undefined", keepText: true });

  await geminiModelRoutes(app, deps);
  geminiEmbedRoutes(app, opts.embeddings);

  app.post(
    "/models/:target",
    {
      schema: {
        params: ModelParams,
        querystring: ContentQuery,
        body: GenerateContentBody,
        response: { 200: ContentAnswer },
      },
      preValidation: knownMethod,
    },
    async (request, reply) => {
      const { model, method } = splitTarget(request.params.target);
      const principal = principalOf(request);
      assertModelAllowed(principal, model);
      if ((method as Method) === "countTokens") {
        await assertContentModel(deps, model);
        const counted = await countContentTokens(relay, {
          requestId: request.id,
          model,
          group: principal.group,
          signal: callSignal(reply.raw),
          body: request.body,
        });
        reply.header(TOKEN_COUNT_HEADER, counted.estimated ? "estimated" : "upstream");
        return counted.result;
      }
      const call: ContentCall = {
        requestId: request.id,
        reference: billingReference(request),
        caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
        model,
        body: request.body,
        // The validated body goes upstream as the client's own text, not serialised again.
        bodyText: forwardableText(bodyTextOf(request), request.body),
        bodyBytes: bodyBytesOf(request),
        // A stream's signal also ends it when the gateway stops.
        signal: callSignal(reply.raw, (method as Method) === "streamGenerateContent" ? deps.stopping : undefined),
      };
      if ((method as Method) === "generateContent") {
        // The upstream's own JSON text goes to the client: parsed once for billing, never re-serialised.
        const answer = await generateContentCall(relay, call);
        return reply.type("application/json; charset=utf-8").send(answer.text);
      }
      const format = request.query.alt === "sse" ? "sse" : "json-array";
      await streamContentCall(relay, call, clientStreamSink(request, reply, format));
      return reply;
    },
  );
}
