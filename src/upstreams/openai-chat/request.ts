import type { ChatMessage, ChatPart, ChatRequest, ChatToolChoice } from "../../core/chat/canonical.js";
import { textOf } from "../../core/chat/canonical.js";
import { putSampling, type SamplingNames } from "../../core/chat/wire-helpers.js";

/** A part as OpenAI's content array holds it; images go as data URLs (the gateway fetched them). */
function wirePart(part: ChatPart): unknown {
  if (part.type === "text") return { type: "text", text: part.text };
  const url =
    part.source.kind === "inline"
      ? `data:${part.source.image.mimeType};base64,${part.source.image.data}`
      : part.source.url;
  return { type: "image_url", image_url: { url } };
}

/** Plain text stays a string (every compatible server reads that); anything else is an array. */
function wireContent(parts: ChatPart[]): unknown {
  return parts.every((p) => p.type === "text") ? textOf(parts) : parts.map(wirePart);
}

function wireMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case "user":
      return { role: "user", content: wireContent(message.parts) };
    case "assistant":
      return {
        role: "assistant",
        content: message.parts.length > 0 ? textOf(message.parts) : null,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: textOf(message.parts) };
  }
}

function wireToolChoice(choice: ChatToolChoice): unknown {
  return choice.kind === "tool" ? { type: "function", function: { name: choice.name } } : choice.kind;
}

const OPENAI_SAMPLING: SamplingNames = {
  maxOutputTokens: "max_tokens",
  temperature: "temperature",
  topP: "top_p",
  stop: "stop",
  n: "n",
  seed: "seed",
  frequencyPenalty: "frequency_penalty",
  presencePenalty: "presence_penalty",
};

/**
 * OpenAI's own settings, as the client sent them: the output limit under the names it gave,
 * `reasoning_effort`, `parallel_tool_calls`, and the settings the canonical form only carries.
 */
function putOpenAiFields(body: Record<string, unknown>, request: ChatRequest): void {
  if (request.openAiOutputLimits) {
    delete body.max_tokens;
    Object.assign(body, request.openAiOutputLimits);
  }
  if (request.reasoningEffort) body.reasoning_effort = request.reasoningEffort;
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  Object.assign(body, request.openAiOnly);
}

/**
 * The body of `POST /v1/chat/completions` for a canonical request. `openAiFields`: the server
 * takes OpenAI's own settings (a vendor with a dialect of its own refuses those it lacks first).
 */
export function openAiChatBody(
  request: ChatRequest,
  model: string,
  stream: boolean,
  openAiFields = true,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: [
      ...request.system.map((text) => ({ role: "system", content: text })),
      ...request.messages.map(wireMessage),
    ],
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters },
    }));
  }
  if (request.toolChoice) body.tool_choice = wireToolChoice(request.toolChoice);
  putSampling(body, request, OPENAI_SAMPLING);
  if (openAiFields) putOpenAiFields(body, request);
  if (request.user !== null) body.user = request.user;
  const format = request.responseFormat;
  if (format.type === "json_object") body.response_format = { type: "json_object" };
  if (format.type === "json_schema") {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: format.name, schema: format.schema, strict: format.strict },
    };
  }
  if (stream) {
    body.stream = true;
    // Usage is what the call is billed by: always asked for, whatever the client wants to see.
    body.stream_options = { include_usage: true };
  }
  return body;
}
