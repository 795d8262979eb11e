import type { ChatAnswer, ChatEvent, ChatRequest } from "../../core/chat/canonical.js";
import type { ChatUpstream, Untranslatable } from "../../core/chat/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { type ChatPost, postChat, postChatStream, v1Post } from "../chat-call.js";
import { SseByteDecoder } from "../gemini/sse-reader.js";
import {
  bodyChunks,
  type ChunkedAnswer,
  networkError,
  parseEvent,
  type UpstreamEndpoint,
  upstreamMessage,
} from "../http.js";
import { answerFromWire, OpenAiChunkReader } from "./answer.js";
import { openAiChatBody } from "./request.js";

/** `POST {base}/v1/chat/completions` (a base that already ends in `/v1` is taken as it is), the key as a Bearer token. */
function postOf(channel: UpstreamEndpoint): ChatPost {
  return v1Post(channel.baseUrl, "chat/completions", { authorization: `Bearer ${channel.key}` });
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

/** One chunk of the stream; an error object in it is thrown as the error it reports. */
function chunkOf(data: string, url: string, key: string): unknown {
  const parsed = parseEvent(data, url);
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
  /**
   * The vendor takes OpenAI's own settings (`max_completion_tokens`, `reasoning_effort`,
   * `parallel_tool_calls`, `store`...): false for a vendor whose `untranslatable` refuses them.
   */
  openAiFields: boolean;
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
  openAiFields: true,
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
        for (const event of reader.read(chunkOf(data, url, key))) yield event;
      }
    }
    for (const data of decoder.finish()) {
      if (data.trim() === "[DONE]") return;
      for (const event of reader.read(chunkOf(data, url, key))) yield event;
    }
  } catch (err) {
    throw isUpstreamError(err) ? err : networkError(err, url);
  }
}

/** The Chat Completions protocol (`POST {base}/v1/chat/completions`, Bearer key) in a vendor's dialect. */
export function openAiChatProtocol(dialect: OpenAiChatDialect): ChatUpstream<UpstreamEndpoint> {
  return {
    untranslatable: (request) => dialect.untranslatable(request),

    async complete(channel, upstreamModel, request: ChatRequest, signal): Promise<ChatAnswer> {
      const body = await postChat(
        channel,
        postOf(channel),
        openAiChatBody(request, upstreamModel, false, dialect.openAiFields),
        signal,
      );
      const error = embeddedError(body, channel.key);
      if (error) throw error;
      return dialect.readAnswer(body, upstreamModel);
    },

    async openStream(channel, upstreamModel, request, signal): Promise<AsyncGenerator<ChatEvent>> {
      const post = postOf(channel);
      return postChatStream(channel, post, openAiChatBody(request, upstreamModel, true, dialect.openAiFields), signal, {
        // A server that ignored `stream: true` answered at once: its answer as events.
        whole: (answer) => dialect.readAnswer(answer, upstreamModel),
        events: (res) => eventsOf(res, post.url, channel.key, dialect.chunkReader(upstreamModel)),
      });
    },
  };
}

/** The `openai-chat` protocol: any OpenAI-compatible chat completions endpoint. */
export const openAiChatUpstream = openAiChatProtocol(OPENAI_DIALECT);
