import type { FastifyInstance } from "fastify";
import { unixNow } from "../../core/ids.js";
import { type ChatSurfaceOptions, chatSurface } from "../chat/chat-route.js";
import { chatCompletion } from "./answer.js";
import { ChatCompletionAnswer } from "./answer-schemas.js";
import { chatRequestFromOpenAi } from "./request.js";
import { ChatCompletionBody } from "./schemas.js";
import { OpenAiChunkSink } from "./stream-sink.js";

/** OpenAI Chat Completions under /v1 (Bearer token, OpenAI error shape). */
export async function openAiChatRoutes(base: FastifyInstance, opts: ChatSurfaceOptions) {
  // The /v1 not-found answers belong to the images surface (same shape); errors here are ours.
  chatSurface(
    base,
    opts,
    {
      path: "/chat/completions",
      summary: "Create a chat completion (OpenAI shape; stream: true for SSE chunks)",
      body: ChatCompletionBody,
      answer: ChatCompletionAnswer,
      canonical: chatRequestFromOpenAi,
      answerOf(request, body) {
        const id = `chatcmpl-${request.id}`;
        const created = unixNow();
        const includeUsage = body.stream_options?.include_usage === true;
        // A request in the legacy form (`functions`) is answered in it (`function_call`).
        const legacy = body.functions !== undefined;
        return {
          json: (answer) => chatCompletion(answer, id, body.model, created, legacy),
          sink: (sse) => new OpenAiChunkSink(sse, { id, model: body.model, created, includeUsage, legacy }),
        };
      },
    },
    { notFound: false },
  );
}
