import { answerAsEvents } from "../../core/chat/answer-events.js";
import type { ChatAnswer, ChatEvent, ChatRequest } from "../../core/chat/canonical.js";
import type { ChatUpstream, Untranslatable } from "../../core/chat/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { callUpstreamStreaming } from "../direct-call.js";
import { SseByteDecoder } from "../gemini/sse-reader.js";
import { bodyChunks, type ChunkedAnswer, networkError, readJson, safeUrl, upstreamMessage } from "../http.js";
import { answerFromWire, OpenAiChunkReader } from "./answer.js";
import { openAiChatBody } from "./request.js";

/** What the adapter needs of a channel. */
export interface OpenAiChatChannel {
  baseUrl: string;
  key: string;
  settings: { timeoutMs?: number; connectTimeoutMs?: number; firstByteTimeoutMs?: number };
}

/** `{base}/v1/chat/completions` (a base that already ends in `/v1` is taken as it is). */
export function chatCompletionsUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  return base.endsWith("/v1") ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

/** The call; its answer is read as it arrives, with no readable stream made of it (see callUpstreamStreaming). */
function send(channel: OpenAiChatChannel, body: unknown, signal: AbortSignal) {
  return callUpstreamStreaming({
    method: "POST",
    url: chatCompletionsUrl(channel.baseUrl),
    headers: { authorization: `Bearer ${channel.key}` },
    json: body,
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs,
  });
}

/** An error object inside a 200 answer or stream event. */
function embeddedError(value: unknown, key: string): UpstreamError | null {
  const error = (value as { error?: unknown })?.error;
  if (!error || typeof error !== "object") return null;
  const code = Number((error as { code?: unknown }).code);
  const status = Number.isInteger(code) && code >= 400 && code < 600 ? code : 500;
  const message = upstreamMessage(value, key) ?? "error event";
  return new UpstreamError(status >= 500 || status === 429 ? "retryable" : "refused", `upstream error: ${message}`, {
    status,
  });
}

function parseEvent(data: string, url: string, key: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new UpstreamError("retryable", `upstream sent an event that is not JSON (${safeUrl(url)})`);
  }
  const error = embeddedError(parsed, key);
  if (error) throw error;
  return parsed;
}

/**
 * What an OpenAI-like vendor does its own way (its own chat channel type): which requests it
 * cannot carry, and how its answers and stream chunks read. The call, its errors and the stream's
 * framing are the protocol's.
 */
export interface OpenAiChatDialect {
  /** Null when the vendor can carry the request; else the field it cannot, and why. */
  untranslatable(request: ChatRequest): Untranslatable | null;
  /** A `chat.completion` answer in canonical form. */
  readAnswer(body: unknown, fallbackModel: string): ChatAnswer;
  /** A reader of one stream's `chat.completion.chunk`s into canonical events. */
  chunkReader(fallbackModel: string): { read(chunk: unknown): ChatEvent[] };
}

type ChunkReader = ReturnType<OpenAiChatDialect["chunkReader"]>;

/** OpenAI's own Chat Completions: every request carried, answers read as OpenAI writes them. */
export const OPENAI_DIALECT: OpenAiChatDialect = {
  untranslatable: () => null,
  readAnswer: answerFromWire,
  chunkReader: (model) => new OpenAiChunkReader(model),
};

/** The canonical events of an SSE answer, read from the socket in this one loop. */
async function* eventsOf(res: ChunkedAnswer, url: string, key: string, reader: ChunkReader) {
  const decoder = new SseByteDecoder();
  try {
    for await (const chunk of bodyChunks(res.body)) {
      for (const data of decoder.push(chunk)) {
        if (data.trim() === "[DONE]") return;
        for (const event of reader.read(parseEvent(data, url, key))) yield event;
      }
    }
    for (const data of decoder.finish()) {
      if (data.trim() === "[DONE]") return;
      for (const event of reader.read(parseEvent(data, url, key))) yield event;
    }
  } catch (err) {
    throw isUpstreamError(err) ? err : networkError(err, url);
  }
}

/** The Chat Completions protocol (`POST {base}/v1/chat/completions`, Bearer key) in a vendor's dialect. */
export function openAiChatProtocol(dialect: OpenAiChatDialect): ChatUpstream<OpenAiChatChannel> {
  return {
    untranslatable: (request) => dialect.untranslatable(request),

    async complete(channel, upstreamModel, request: ChatRequest, signal): Promise<ChatAnswer> {
      const url = chatCompletionsUrl(channel.baseUrl);
      const res = await send(channel, openAiChatBody(request, upstreamModel, false), signal);
      const body = await readJson(res, url, { secret: channel.key });
      const error = embeddedError(body, channel.key);
      if (error) throw error;
      return dialect.readAnswer(body, upstreamModel);
    },

    async openStream(channel, upstreamModel, request, signal): Promise<AsyncGenerator<ChatEvent>> {
      const url = chatCompletionsUrl(channel.baseUrl);
      const res = await send(channel, openAiChatBody(request, upstreamModel, true), signal);
      if (res.statusCode < 200 || res.statusCode >= 300) await readJson(res, url, { secret: channel.key });
      const type = String(res.headers["content-type"] ?? "");
      if (type.includes("application/json")) {
        // A server that ignored `stream: true` answered at once: its answer as events.
        const answer = dialect.readAnswer(await readJson(res, url, { secret: channel.key }), upstreamModel);
        return answerAsEvents(answer);
      }
      return eventsOf(res, url, channel.key, dialect.chunkReader(upstreamModel));
    },
  };
}

/** The `openai-chat` protocol: any OpenAI-compatible chat completions endpoint. */
export const openAiChatUpstream = openAiChatProtocol(OPENAI_DIALECT);
