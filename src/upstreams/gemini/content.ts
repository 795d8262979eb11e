import type { ContentChunk, CountedTokens, UpstreamBody } from "../../core/content/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { callUpstreamForText, callUpstreamStreaming } from "../direct-call.js";
import {
  bodyChunks,
  type ChunkedAnswer,
  networkError,
  parseEvent,
  postJson,
  readText,
  safeUrl,
  type UpstreamCall,
  type UpstreamEndpoint,
} from "../http.js";
import { geminiError, geminiStreamError } from "./errors.js";
import { SseByteDecoder } from "./sse-reader.js";

/** An opened upstream stream: its first chunk already read, the rest as they arrive. */
export interface ContentStream {
  first: ContentChunk;
  rest: AsyncGenerator<ContentChunk>;
}

const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** `{base}/v1beta/models/{model}:generateContent` or `:streamGenerateContent?alt=sse`. */
export function contentUrl(baseUrl: string, model: string, stream: boolean): string {
  const base = baseUrl.replace(/\/+$/, "");
  const path = `${base}/v1beta/models/${encodeURI(model)}`;
  return stream ? `${path}:streamGenerateContent?alt=sse` : `${path}:generateContent`;
}

function callOf(channel: UpstreamEndpoint, url: string, body: UpstreamBody, signal: AbortSignal): UpstreamCall {
  return postJson(channel, url, { "x-goog-api-key": channel.key }, { json: body.value, jsonText: body.text }, signal);
}

function parseChunk(text: string, url: string, key: string): ContentChunk {
  const parsed = parseEvent(text, url);
  const error = (parsed as { error?: unknown })?.error;
  if (error && typeof error === "object") throw geminiStreamError(error, key);
  return { value: parsed, text };
}

/** Calls `:generateContent` and returns the answer; failures come back as classified UpstreamErrors. */
export async function generateContent(
  channel: UpstreamEndpoint,
  upstreamModel: string,
  body: UpstreamBody,
  signal: AbortSignal,
): Promise<ContentChunk> {
  const url = contentUrl(channel.baseUrl, upstreamModel, false);
  // Read whole as it arrives, with no stream made of it (see callUpstreamForText).
  const answer = await callUpstreamForText(callOf(channel, url, body, signal), MAX_ANSWER_BYTES);
  if (answer.statusCode < 200 || answer.statusCode >= 300)
    throw geminiError(answer.statusCode, answer.text, channel.key);
  return parseChunk(answer.text, url, channel.key);
}

async function* chunksOf(res: ChunkedAnswer, url: string, key: string): AsyncGenerator<ContentChunk> {
  const type = String(res.headers["content-type"] ?? "");
  try {
    if (type.includes("application/json")) {
      // An upstream that ignored `alt=sse` and sent the JSON-array stream: read it whole.
      const parsed = JSON.parse(await readText(res, url, MAX_ANSWER_BYTES));
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) yield parseChunk(JSON.stringify(item), url, key);
      return;
    }
    const events = new SseByteDecoder();
    for await (const chunk of bodyChunks(res.body))
      for (const data of events.push(chunk)) yield parseChunk(data, url, key);
    for (const data of events.finish()) yield parseChunk(data, url, key);
  } catch (err) {
    if (isUpstreamError(err)) throw err;
    if (err instanceof SyntaxError)
      throw new UpstreamError("retryable", `upstream sent malformed JSON (${safeUrl(url)})`);
    throw networkError(err, url);
  }
}

/**
 * Calls `:streamGenerateContent?alt=sse` and waits for the first chunk, so that a failure before
 * it (an error status, an error event, an empty or broken stream) can still go to another channel.
 */
export async function openContentStream(
  channel: UpstreamEndpoint,
  upstreamModel: string,
  body: UpstreamBody,
  signal: AbortSignal,
): Promise<ContentStream> {
  const url = contentUrl(channel.baseUrl, upstreamModel, true);
  // Read as it arrives, with no readable stream made of it (see callUpstreamStreaming).
  const res = await callUpstreamStreaming(callOf(channel, url, body, signal));
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw geminiError(res.statusCode, await readText(res, url, MAX_ANSWER_BYTES), channel.key);
  }
  const rest = chunksOf(res, url, channel.key);
  const first = await rest.next();
  if (first.done) throw new UpstreamError("retryable", `upstream ended the stream before any event (${safeUrl(url)})`);
  return { first: first.value, rest };
}

/**
 * Calls `:countTokens` (free) and returns its answer; an answer without a whole `totalTokens` is
 * an UpstreamError like any failure.
 */
export async function countContentTokens(
  channel: UpstreamEndpoint,
  upstreamModel: string,
  body: UpstreamBody,
  signal: AbortSignal,
): Promise<CountedTokens> {
  const url = `${channel.baseUrl.replace(/\/+$/, "")}/v1beta/models/${encodeURI(upstreamModel)}:countTokens`;
  const answer = await callUpstreamForText(callOf(channel, url, body, signal), MAX_ANSWER_BYTES);
  if (answer.statusCode < 200 || answer.statusCode >= 300)
    throw geminiError(answer.statusCode, answer.text, channel.key);
  const value = parseChunk(answer.text, url, channel.key).value as Partial<CountedTokens> | null;
  const total = value?.totalTokens;
  if (typeof total !== "number" || !Number.isSafeInteger(total) || total < 0) {
    throw new UpstreamError("retryable", `upstream answered a count without totalTokens (${safeUrl(url)})`);
  }
  return value as CountedTokens;
}
