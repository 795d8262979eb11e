/**
 * What the benchmark sends: the models and prompts of each load, the requests of each path, and
 * one request before each load to see that the path answers as expected.
 */
import type { LoadRequest } from "./load.js";

export const MODEL = "gemini-2.5-flash";
export const IMAGE_MODEL = "image-model";
/** Streamed for the time to first event: the minimal upstream paces the streams of this model. */
export const PACED_MODEL = "bench-paced";
/** Served by an `openai-chat` channel: the chat load. */
export const CHAT_MODEL = "bench-chat";
export const UPSTREAM_KEY = "bench-upstream-key";
export const PROMPT = "Write one line about a harbor at dawn.";
// `[slow]` makes the simulator wait 200 ms before each chunk after the first (the minimal
// upstream does the same for PACED_MODEL): a relay that buffered would show its first event near
// the end of the stream instead of at once.
export const FIRST_EVENT_PROMPT = "[slow] [chunks=2] Write one line about a harbor at dawn.";

const trim = (base: string) => base.replace(/\/$/, "");

/** Gemini `generateContent`, or `streamGenerateContent?alt=sse` with `stream`. */
export function geminiRequest(base: string, key: string, stream: boolean, prompt = PROMPT, model = MODEL): LoadRequest {
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return {
    url: `${trim(base)}/v1beta/models/${model}:${method}`,
    headers: { "content-type": "application/json", "x-goog-api-key": key },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: prompt }] }],
      generationConfig: { maxOutputTokens: 256 },
    }),
  };
}

/** The body of the chat load: one user message, streamed. */
export const CHAT_BODY = JSON.stringify({
  model: CHAT_MODEL,
  messages: [{ role: "user", content: PROMPT }],
  max_tokens: 256,
  stream: true,
});

/** OpenAI `POST /v1/chat/completions` with `stream: true`, Bearer `key`. */
export function chatRequest(base: string, key: string): LoadRequest {
  return {
    url: `${trim(base)}/v1/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: CHAT_BODY,
  };
}

export const IMAGE_PROMPT = "a lighthouse at dawn, watercolour";

/** OpenAI `POST /v1/images/generations` of IMAGE_MODEL (the 1K tier), Bearer `key`. */
export function imageRequest(base: string, key: string): LoadRequest {
  return {
    url: `${trim(base)}/v1/images/generations`,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: IMAGE_MODEL, prompt: IMAGE_PROMPT }),
  };
}

/** What a good answer looks like: a JSON answer, a Gemini event stream, a chat stream ending in [DONE], an image URL. */
export type Expectation = "json" | "sse" | "chat-sse" | "image";

/** One request before the load: null when it answers as expected, else why not. */
export async function preflight(request: LoadRequest, expect: Expectation): Promise<string | null> {
  try {
    const res = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const where = new URL(request.url).pathname;
    if (res.status !== 200) return `POST ${where} answered ${res.status}: ${text.slice(0, 160)}`;
    if ((expect === "sse" || expect === "chat-sse") && !/(^|\n)data:/.test(text))
      return `POST ${where} answered 200 without any event`;
    if (expect === "chat-sse" && !/"delta"/.test(text)) return `POST ${where} answered 200 without a chat chunk`;
    if (expect === "chat-sse" && !/(^|\n)data: \[DONE\]/.test(text))
      return `POST ${where} answered 200 without data: [DONE]`;
    if (expect === "json" && !/"(candidates|choices)"/.test(text))
      return `POST ${where} answered 200 without candidates`;
    if (expect === "image" && !/"url"/.test(text)) return `POST ${where} answered 200 without an image URL`;
    return null;
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
}
