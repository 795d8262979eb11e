import type { ContentChunk, UpstreamBody } from "../../core/content/ports.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { callUpstreamForText, callUpstreamStreaming } from "../direct-call.js";
import { bodyChunks, type ChunkedAnswer, networkError, safeUrl, type UpstreamCall } from "../http.js";
import { geminiError, geminiStreamError } from "./errors.js";
import { SseByteDecoder } from "./sse-reader.js";

/** What the content adapter needs of a channel. */
export interface GeminiContentChannel {
  baseUrl: string;
  key: string;
  settings: { timeoutMs?: number; connectTimeoutMs?: number; firstByteTimeoutMs?: number };
}

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

function callOf(channel: GeminiContentChannel, url: string, body: UpstreamBody, signal: AbortSignal): UpstreamCall {
  return {
    method: "POST",
    url,
    headers: { "x-goog-api-key": channel.key },
    json: body.value,
    jsonText: body.text,
    signal,
    connectTimeoutMs: channel.settings.connectTimeoutMs,
    firstByteTimeoutMs: channel.settings.firstByteTimeoutMs,
    timeoutMs: channel.settings.timeoutMs,
  };
}

async function readText(res: ChunkedAnswer, url: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of bodyChunks(res.body)) {
      size += (chunk as Buffer).length;
      if (size > MAX_ANSWER_BYTES) {
        res.body.destroy();
        throw new UpstreamError("retryable", `upstream answer larger than ${MAX_ANSWER_BYTES} bytes (${safeUrl(url)})`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw isUpstreamError(err) ? err : networkError(err, url);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseChunk(text: string, url: string, key: string): ContentChunk {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamError("retryable", `upstream sent an event that is not JSON (${safeUrl(url)})`);
  }
  const error = (parsed as { error?: unknown })?.error;
  if (error && typeof error === "object") throw geminiStreamError(error, key);
  return { value: parsed, text };
}

/** Calls `:generateContent` and returns the answer; failures come back as classified UpstreamErrors. */
export async function generateContent(
  channel: GeminiContentChannel,
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
      const parsed = JSON.parse(await readText(res, url));
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
  channel: GeminiContentChannel,
  upstreamModel: string,
  body: UpstreamBody,
  signal: AbortSignal,
): Promise<ContentStream> {
  const url = contentUrl(channel.baseUrl, upstreamModel, true);
  // Read as it arrives, with no readable stream made of it (see callUpstreamStreaming).
  const res = await callUpstreamStreaming(callOf(channel, url, body, signal));
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw geminiError(res.statusCode, await readText(res, url), channel.key);
  }
  const rest = chunksOf(res, url, channel.key);
  const first = await rest.next();
  if (first.done) throw new UpstreamError("retryable", `upstream ended the stream before any event (${safeUrl(url)})`);
  return { first: first.value, rest };
}
