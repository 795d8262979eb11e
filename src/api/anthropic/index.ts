import type { FastifyInstance } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { inputTokenEstimate } from "../../core/chat/estimate.js";
import { GatewayError } from "../../core/errors.js";
import { principalOf } from "../auth-hook.js";
import { type ChatSurfaceOptions, chatSurface } from "../chat/chat-route.js";
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
  const app = chatSurface(base, opts, {
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
