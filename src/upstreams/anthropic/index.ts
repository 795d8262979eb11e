import type { ChatEvent } from "../../core/chat/canonical.js";
import type { ChatUpstream } from "../../core/chat/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { type ChatPost, postChat, postChatStream, v1Post } from "../chat-call.js";
import { readSseEvents } from "../gemini/sse-reader.js";
import { type ChunkedAnswer, networkError, parseEvent, type UpstreamEndpoint, upstreamMessage } from "../http.js";
import { AnthropicEventReader, answerFromAnthropic } from "./answer.js";
import { anthropicBody, anthropicUntranslatable, structuredOutputTool } from "./request.js";

export const ANTHROPIC_VERSION = "2023-06-01";

/** `POST {base}/v1/messages` (a base that already ends in `/v1` is taken as it is), with the key and version headers. */
function postOf(channel: UpstreamEndpoint): ChatPost {
  return v1Post(channel.baseUrl, "messages", { "x-api-key": channel.key, "anthropic-version": ANTHROPIC_VERSION });
}

/** The fields of a Messages body that `/v1/messages/count_tokens` takes (it refuses the others). */
const COUNTED_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking"];

/** `POST {base}/v1/messages/count_tokens` (free): the input tokens of a Messages body. */
async function countTokens(channel: UpstreamEndpoint, body: Record<string, unknown>, signal: AbortSignal) {
  const post = v1Post(channel.baseUrl, "messages/count_tokens", {
    "x-api-key": channel.key,
    "anthropic-version": ANTHROPIC_VERSION,
  });
  const counted = Object.fromEntries(Object.entries(body).filter(([field]) => COUNTED_FIELDS.includes(field)));
  const answer = (await postChat(channel, post, counted, signal)) as { input_tokens?: unknown } | null;
  const tokens = answer?.input_tokens;
  if (typeof tokens !== "number" || !Number.isSafeInteger(tokens) || tokens < 0) {
    throw new UpstreamError("retryable", "upstream answered a count without input_tokens");
  }
  return tokens;
}

/** An `error` event inside a stream (`overloaded_error` is Anthropic's 529). */
function streamError(value: unknown, key: string): UpstreamError {
  const type = String((value as { error?: { type?: unknown } })?.error?.type ?? "");
  const message = upstreamMessage(value, key) ?? type;
  const status =
    type === "overloaded_error"
      ? 529
      : type === "rate_limit_error"
        ? 429
        : type === "invalid_request_error"
          ? 400
          : 500;
  return new UpstreamError(status === 400 ? "refused" : "retryable", `upstream error event: ${message}`, { status });
}

async function* eventsOf(res: ChunkedAnswer, url: string, key: string, model: string, structuredTool: string | null) {
  const reader = new AnthropicEventReader(model, structuredTool);
  try {
    for await (const data of readSseEvents(res.body)) {
      const parsed = parseEvent(data, url);
      const type = (parsed as { type?: unknown })?.type;
      if (type === "error") throw streamError(parsed, key);
      for (const event of reader.read(parsed)) yield event;
      if (type === "message_stop") return;
    }
  } catch (err) {
    throw isUpstreamError(err) ? err : networkError(err, url);
  }
}

/** The `anthropic` protocol: the Messages API. */
export const anthropicUpstream: ChatUpstream<UpstreamEndpoint> = {
  untranslatable: anthropicUntranslatable,

  async complete(channel, upstreamModel, request, signal) {
    const answer = await postChat(channel, postOf(channel), anthropicBody(request, upstreamModel, false), signal);
    return answerFromAnthropic(answer, upstreamModel, structuredOutputTool(request)?.name ?? null);
  },

  async openStream(channel, upstreamModel, request, signal): Promise<AsyncGenerator<ChatEvent>> {
    const post = postOf(channel);
    const structured = structuredOutputTool(request)?.name ?? null;
    return postChatStream(channel, post, anthropicBody(request, upstreamModel, true), signal, {
      whole: (answer) => answerFromAnthropic(answer, upstreamModel, structured),
      events: (res) => eventsOf(res, post.url, channel.key, upstreamModel, structured),
    });
  },

  countTokens: (channel, upstreamModel, request, signal) =>
    countTokens(channel, anthropicBody(request, upstreamModel, false), signal),
};
