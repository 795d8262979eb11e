import { answerAsEvents } from "../../core/chat/answer-events.js";
import type { ChatEvent } from "../../core/chat/canonical.js";
import type { ChatUpstream } from "../../core/chat/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { callUpstreamStreaming } from "../direct-call.js";
import { readSseEvents } from "../gemini/sse-reader.js";
import { type ChunkedAnswer, networkError, readJson, safeUrl, upstreamMessage } from "../http.js";
import { AnthropicEventReader, answerFromAnthropic } from "./answer.js";
import { anthropicBody, anthropicUntranslatable } from "./request.js";

export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicChannel {
  baseUrl: string;
  key: string;
  settings: { timeoutMs?: number; connectTimeoutMs?: number; firstByteTimeoutMs?: number };
}

/** `{base}/v1/messages` (a base that already ends in `/v1` is taken as it is). */
export function messagesUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  return base.endsWith("/v1") ? `${base}/messages` : `${base}/v1/messages`;
}

/** The call; its answer is read as it arrives, with no readable stream made of it (see callUpstreamStreaming). */
function send(channel: AnthropicChannel, body: unknown, signal: AbortSignal) {
  return callUpstreamStreaming({
    method: "POST",
    url: messagesUrl(channel.baseUrl),
    headers: { "x-api-key": channel.key, "anthropic-version": ANTHROPIC_VERSION },
    json: body,
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs,
  });
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

async function* eventsOf(res: ChunkedAnswer, url: string, key: string, model: string) {
  const reader = new AnthropicEventReader(model);
  try {
    for await (const data of readSseEvents(res.body)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        throw new UpstreamError("retryable", `upstream sent an event that is not JSON (${safeUrl(url)})`);
      }
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
export const anthropicUpstream: ChatUpstream<AnthropicChannel> = {
  untranslatable: anthropicUntranslatable,

  async complete(channel, upstreamModel, request, signal) {
    const url = messagesUrl(channel.baseUrl);
    const res = await send(channel, anthropicBody(request, upstreamModel, false), signal);
    return answerFromAnthropic(await readJson(res, url, { secret: channel.key }), upstreamModel);
  },

  async openStream(channel, upstreamModel, request, signal): Promise<AsyncGenerator<ChatEvent>> {
    const url = messagesUrl(channel.baseUrl);
    const res = await send(channel, anthropicBody(request, upstreamModel, true), signal);
    if (res.statusCode < 200 || res.statusCode >= 300) await readJson(res, url, { secret: channel.key });
    if (String(res.headers["content-type"] ?? "").includes("application/json")) {
      return answerAsEvents(answerFromAnthropic(await readJson(res, url, { secret: channel.key }), upstreamModel));
    }
    return eventsOf(res, url, channel.key, upstreamModel);
  },
};
