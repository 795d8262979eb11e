import type { EmbeddingsAnswer, EmbeddingsRequest, EmbeddingsUpstream } from "../../core/embeddings/ports.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { callUpstreamForText } from "../direct-call.js";
import { parseEvent, postJson, safeUrl, type UpstreamEndpoint } from "../http.js";
import { geminiError } from "./errors.js";

/** Most requests Google takes in one `:batchEmbedContents`; more inputs go in several calls. */
const BATCH_LIMIT = 100;

type TextInput = { text: string; title?: string };
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** One `EmbedContentRequest` of a text input, with the request's settings. */
function embedRequest(input: TextInput, request: EmbeddingsRequest, model: string | null): Record<string, unknown> {
  return {
    ...(model !== null ? { model: `models/${model}` } : {}),
    content: { parts: [{ text: input.text }] },
    ...(request.taskType !== null ? { taskType: request.taskType } : {}),
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(request.dimensions !== null ? { outputDimensionality: request.dimensions } : {}),
  };
}

async function post(channel: UpstreamEndpoint, url: string, json: unknown, signal: AbortSignal): Promise<unknown> {
  const call = postJson(channel, url, { "x-goog-api-key": channel.key }, { json }, signal);
  const answer = await callUpstreamForText(call, MAX_ANSWER_BYTES);
  if (answer.statusCode < 200 || answer.statusCode >= 300) {
    throw geminiError(answer.statusCode, answer.text, channel.key);
  }
  return parseEvent(answer.text, url);
}

function valuesOf(embedding: unknown, url: string): number[] {
  const values = (embedding as { values?: unknown })?.values;
  if (!Array.isArray(values)) throw new UpstreamError("retryable", `upstream answered no embedding (${safeUrl(url)})`);
  return values as number[];
}

/**
 * Google's Gemini API: one input by `:embedContent`, several by `:batchEmbedContents` (in calls
 * of at most 100, one after another). Gemini reports no token usage for embeddings: the call is
 * settled to the gateway's own count.
 */
export const geminiEmbeddingsUpstream: EmbeddingsUpstream<UpstreamEndpoint> = {
  untranslatable(request) {
    if (request.inputs.some((i) => "tokens" in i)) {
      return { field: "input", reason: "this model's upstream (Gemini) takes text, not token lists" };
    }
    return null;
  },

  async embed(channel, upstreamModel, request, signal): Promise<EmbeddingsAnswer> {
    const base = `${channel.baseUrl.replace(/\/+$/, "")}/v1beta/models/${encodeURI(upstreamModel)}`;
    const texts = request.inputs.map((i): TextInput => ("text" in i ? i : { text: "" }));
    if (texts.length === 1) {
      const url = `${base}:embedContent`;
      const body = await post(channel, url, embedRequest(texts[0] as TextInput, request, null), signal);
      return { vectors: [valuesOf((body as { embedding?: unknown })?.embedding, url)], promptTokens: null };
    }
    const url = `${base}:batchEmbedContents`;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += BATCH_LIMIT) {
      const part = texts.slice(start, start + BATCH_LIMIT);
      const requests = part.map((input) => embedRequest(input, request, upstreamModel));
      const body = await post(channel, url, { requests }, signal);
      const embeddings = (body as { embeddings?: unknown })?.embeddings;
      if (!Array.isArray(embeddings) || embeddings.length !== part.length) {
        throw new UpstreamError("retryable", `upstream answered a batch of another size (${safeUrl(url)})`);
      }
      for (const embedding of embeddings) vectors.push(valuesOf(embedding, url));
    }
    return { vectors, promptTokens: null };
  },
};
