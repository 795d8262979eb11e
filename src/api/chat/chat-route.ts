import type { Static, TSchema, TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import type { Channel } from "../../core/channel.js";
import type { ChatAnswer, ChatRequest } from "../../core/chat/canonical.js";
import type { ChatCall, ChatRelayDeps, ChatSink } from "../../core/chat/ports.js";
import { completeChat, streamChat } from "../../core/chat/relay.js";
import { newRequestId } from "../../core/ids.js";
import type { VendorRegistry } from "../../core/vendor-registry.js";
import { type BodyBounds, installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import type { Channels } from "../../store/channels.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { errorShapeOf } from "../route-table.js";
import { SseWriter } from "./sse-writer.js";

// The one route shell of the chat surfaces (OpenAI's and Anthropic's shapes): each gives its
// schemas, its translation into the canonical request and its renderings of the answer.

/** What the chat surfaces (OpenAI's and Anthropic's shapes) use. */
export type ChatSurfaceDeps = TokenAuthDeps & {
  config: { bodies: { chat: BodyBounds }; images: { allowPrivateUrls: boolean; maxImageBytes: number } };
  /** Set while the gateway stops: a stream in flight ends then. */
  stopping?: AbortSignal;
  channels: Pick<Channels, "isKnownModel">;
  vendors: Pick<VendorRegistry, "serving">;
};

/** A chat surface's options: its deps, and the metered-call engine's ports wired by the app. */
export interface ChatSurfaceOptions {
  deps: ChatSurfaceDeps;
  /** The relay's ports, given the surface's guarded fetcher of image URLs. */
  relay(fetcher: GuardedFetcher): ChatRelayDeps<Channel>;
}

/** The ledger reference of a chat call: the request id, unless the client chose that id itself. */
export function chatReference(request: FastifyRequest): string {
  const chosenByClient = request.headers["x-request-id"] === request.id;
  return `chat:${chosenByClient ? newRequestId() : request.id}`;
}

/** One chat surface's shape of a call: its route, schemas, request and renderings. */
export interface ChatShape<B extends TSchema> {
  path: string;
  summary: string;
  body: B;
  /** The 200 answer's OpenAPI description. */
  answer: object;
  /** The client's body as the canonical request (a 400 naming the field it cannot take). */
  canonical(body: Static<B>, maxImageBytes: number): ChatRequest;
  /** The answer of one request: as JSON text, or as a stream written to `sse`. */
  answerOf(
    request: FastifyRequest,
    body: Static<B>,
    canonical: ChatRequest,
  ): { json(answer: ChatAnswer): unknown; sink(sse: SseWriter): ChatSink };
}

/**
 * Installs a chat surface on `base` (its error shape, token auth, input bounds; `notFound`:
 * whether its not-found answers are its own) and its completion route; returns the surface and
 * the relay's ports, for the surface's further routes.
 */
export function chatSurface<B extends TSchema>(
  base: FastifyInstance,
  surface: ChatSurfaceOptions,
  shape: ChatShape<B>,
  options: { notFound?: boolean } = {},
) {
  const { deps } = surface;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  installSurface(app, errorShapeOf(app.prefix), options);
  app.addHook("onRequest", requireToken(deps));
  installInputBounds(app, deps.config.bodies.chat);
  // Images given by URL are fetched by the gateway, under the same SSRF guard as the images surface.
  const fetcher = new GuardedFetcher({ allowPrivate: deps.config.images.allowPrivateUrls });
  app.addHook("onClose", () => fetcher.close());
  const relay = surface.relay(fetcher);

  app.post(
    shape.path,
    { schema: { summary: shape.summary, body: shape.body, response: { 200: shape.answer } } },
    async (request: FastifyRequest<{ Body: Static<B> }>, reply: FastifyReply) => {
      const body = request.body as Static<B> & { model: string; stream?: boolean };
      const principal = principalOf(request);
      assertModelAllowed(principal, body.model);
      const call: ChatCall = {
        requestId: request.id,
        reference: chatReference(request),
        caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
        model: body.model,
        request: shape.canonical(body, deps.config.images.maxImageBytes),
        // A stream's signal also ends it when the gateway stops.
        signal: callSignal(reply.raw, body.stream === true ? deps.stopping : undefined),
      };
      const answer = shape.answerOf(request, body, call.request);
      if (body.stream !== true) {
        // Written as JSON text here: the response schema documents the object, it does not reshape it.
        const json = answer.json(await completeChat(relay, call));
        return reply.type("application/json; charset=utf-8").send(JSON.stringify(json));
      }
      const sse = new SseWriter(request, reply);
      try {
        await streamChat(relay, call, answer.sink(sse));
      } finally {
        sse.dispose();
      }
      return reply;
    },
  );
  return { app, relay };
}
