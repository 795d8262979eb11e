import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import { inputTokenEstimate } from "../../core/chat/estimate.js";
import type { ChatCall } from "../../core/chat/ports.js";
import { completeChat, streamChat } from "../../core/chat/relay.js";
import { GatewayError } from "../../core/errors.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import { principalOf, requireToken } from "../auth-hook.js";
import { chatReference } from "../chat/call.js";
import { type ChatSurfaceDeps, chatRelayDeps } from "../chat/relay-deps.js";
import { SseWriter } from "../chat/sse-writer.js";
import { installInputBounds } from "../input-bounds.js";
import { errorShapeOf } from "../route-table.js";
import { installSurface } from "../surfaces.js";
import { anthropicMessage } from "./answer.js";
import { CountTokensAnswer, MessageAnswer } from "./answer-schemas.js";
import { chatRequestFromAnthropic } from "./request.js";
import { CountTokensBody, MessagesBody } from "./schemas.js";
import { AnthropicEventSink } from "./stream-sink.js";

/**
 * Anthropic Messages under /v1/messages, with its own not-found answers (`x-api-key` or Bearer token; `anthropic-version` and
 * `anthropic-beta` are accepted and not needed; Anthropic's error shape).
 */
export async function anthropicRoutes(base: FastifyInstance, opts: { deps: ChatSurfaceDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  installSurface(app, errorShapeOf(app.prefix));
  app.addHook("onRequest", requireToken(deps));
  installInputBounds(app, deps.config.bodies.chat);
  const fetcher = new GuardedFetcher({ allowPrivate: deps.config.images.allowPrivateUrls });
  app.addHook("onClose", () => fetcher.close());
  const relay = chatRelayDeps(deps, deps.logger, fetcher);

  app.post(
    "",
    {
      schema: {
        summary: "Create a message (Anthropic shape; stream: true for its SSE events)",
        body: MessagesBody,
        response: { 200: MessageAnswer },
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
        request: chatRequestFromAnthropic(body, deps.config.images.maxImageBytes),
        // A stream's signal also ends it when the gateway stops.
        signal: callSignal(reply.raw, body.stream === true ? deps.stopping : undefined),
      };
      const id = `msg_${request.id.replaceAll("-", "")}`;
      if (body.stream !== true) {
        // Written as JSON text here: the response schema documents the object, it does not reshape it.
        const message = anthropicMessage(await completeChat(relay, call), id, body.model);
        return reply.type("application/json; charset=utf-8").send(JSON.stringify(message));
      }
      const sse = new SseWriter(request, reply);
      try {
        await streamChat(relay, call, new AnthropicEventSink(sse, { id, model: body.model }));
      } finally {
        sse.dispose();
      }
      return reply;
    },
  );

  /**
   * The gateway's own estimate of the input (four characters a token, a fixed amount per image):
   * free, and the same for every upstream that may serve the model.
   */
  app.post(
    "/count_tokens",
    {
      schema: {
        summary: "Count the input tokens of a message (the gateway's own estimate; free)",
        body: CountTokensBody,
        response: { 200: CountTokensAnswer },
      },
    },
    async (request) => {
      const body = request.body;
      const principal = principalOf(request);
      assertModelAllowed(principal, body.model);
      if (!(await deps.channels.isKnownModel(body.model, deps.vendors.serving("chat")))) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `model: ${body.model}`, { param: "model" });
      }
      return { input_tokens: inputTokenEstimate(chatRequestFromAnthropic(body, deps.config.images.maxImageBytes)) };
    },
  );
}
