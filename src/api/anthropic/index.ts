import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import { countChatTokens } from "../../core/chat/count-tokens.js";
import { inputTokenEstimate } from "../../core/chat/estimate.js";
import { GatewayError } from "../../core/errors.js";
import { principalOf } from "../auth-hook.js";
import { type ChatSurfaceOptions, chatSurface } from "../chat/chat-route.js";
import { TOKEN_COUNT_HEADER } from "../token-count-header.js";
import { anthropicMessage } from "./answer.js";
import { CountTokensAnswer, MessageAnswer } from "./answer-schemas.js";
import { chatRequestFromAnthropic } from "./request.js";
import { CountTokensBody, MessagesBody } from "./schemas.js";
import { AnthropicEventSink } from "./stream-sink.js";

/**
 * Anthropic Messages under /v1/messages, with its own not-found answers (`x-api-key` or Bearer token; `anthropic-version` and
 * `anthropic-beta` are accepted and not needed; Anthropic's error shape).
 */
export async function anthropicRoutes(base: FastifyInstance, opts: ChatSurfaceOptions) {
  const { deps } = opts;
  const { app, relay } = chatSurface(base, opts, {
    path: "",
    summary: "Create a message (Anthropic shape; stream: true for its SSE events)",
    body: MessagesBody,
    answer: MessageAnswer,
    canonical: chatRequestFromAnthropic,
    answerOf(request, body, canonical) {
      const id = `msg_${request.id.replaceAll("-", "")}`;
      return {
        json: (answer) => anthropicMessage(answer, id, body.model),
        sink: (sse) =>
          new AnthropicEventSink(sse, { id, model: body.model, inputEstimate: () => inputTokenEstimate(canonical) }),
      };
    },
  });

  /**
   * The input's token count, free: the upstream's own (`/v1/messages/count_tokens` of an Anthropic
   * channel, `:countTokens` of a Gemini one) through the channel a call would go to, else the
   * gateway's estimate (four characters a token, a fixed amount per image), told by the header
   * `x-gateway-token-count: estimated`.
   */
  app.post(
    "/count_tokens",
    {
      schema: {
        summary: "Count the input tokens of a message (free; the upstream's count where its vendor has one)",
        body: CountTokensBody,
        response: { 200: CountTokensAnswer },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const principal = principalOf(request);
      assertModelAllowed(principal, body.model);
      if (!(await deps.channels.isKnownModel(body.model, deps.vendors.serving("chat")))) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `model: ${body.model}`, { param: "model" });
      }
      const counted = await countChatTokens(relay, {
        requestId: request.id,
        model: body.model,
        group: principal.group,
        signal: callSignal(reply.raw),
        request: chatRequestFromAnthropic(body, deps.config.images.maxImageBytes),
      });
      reply.header(TOKEN_COUNT_HEADER, counted.estimated ? "estimated" : "upstream");
      return { input_tokens: counted.result };
    },
  );
}
