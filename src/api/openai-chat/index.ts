import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import type { ChatCall } from "../../core/chat/ports.js";
import { completeChat, streamChat } from "../../core/chat/relay.js";
import { unixNow } from "../../core/ids.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import { principalOf, requireToken } from "../auth-hook.js";
import { chatReference } from "../chat/call.js";
import { type ChatSurfaceDeps, chatRelayDeps } from "../chat/relay-deps.js";
import { SseWriter } from "../chat/sse-writer.js";
import { installInputBounds } from "../input-bounds.js";
import { errorShapeOf } from "../route-table.js";
import { installSurface } from "../surfaces.js";
import { chatCompletion } from "./answer.js";
import { ChatCompletionAnswer } from "./answer-schemas.js";
import { chatRequestFromOpenAi } from "./request.js";
import { ChatCompletionBody } from "./schemas.js";
import { OpenAiChunkSink } from "./stream-sink.js";

/** OpenAI Chat Completions under /v1 (Bearer token, OpenAI error shape). */
export async function openAiChatRoutes(base: FastifyInstance, opts: { deps: ChatSurfaceDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  // The /v1 not-found answers belong to the images surface (same shape); errors here are ours.
  installSurface(app, errorShapeOf(app.prefix), { notFound: false });
  app.addHook("onRequest", requireToken(deps));
  installInputBounds(app, deps.config.bodies.chat);
  // Images given by URL are fetched by the gateway, under the same SSRF guard as the images surface.
  const fetcher = new GuardedFetcher({ allowPrivate: deps.config.images.allowPrivateUrls });
  app.addHook("onClose", () => fetcher.close());
  const relay = chatRelayDeps(deps, deps.logger, fetcher);

  app.post(
    "/chat/completions",
    {
      schema: {
        summary: "Create a chat completion (OpenAI shape; stream: true for SSE chunks)",
        body: ChatCompletionBody,
        response: { 200: ChatCompletionAnswer },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const principal = principalOf(request);
      assertModelAllowed(principal, body.model);
      const call: ChatCall = {
        requestId: request.id,
        reference: chatReference(request),
        caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
        model: body.model,
        request: chatRequestFromOpenAi(body, deps.config.images.maxImageBytes),
        // A stream's signal also ends it when the gateway stops.
        signal: callSignal(reply.raw, body.stream === true ? deps.stopping : undefined),
      };
      const id = `chatcmpl-${request.id}`;
      const created = unixNow();
      if (body.stream !== true) {
        const answer = await completeChat(relay, call);
        // Written as JSON text here: the response schema documents the object, it does not reshape it.
        return reply
          .type("application/json; charset=utf-8")
          .send(JSON.stringify(chatCompletion(answer, id, body.model, created)));
      }
      const includeUsage = body.stream_options?.include_usage === true;
      const sse = new SseWriter(request, reply);
      const sink = new OpenAiChunkSink(sse, { id, model: body.model, created, includeUsage });
      try {
        await streamChat(relay, call, sink);
      } finally {
        sse.dispose();
      }
      return reply;
    },
  );
}
