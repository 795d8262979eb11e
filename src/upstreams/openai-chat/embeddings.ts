import type { EmbeddingsAnswer, EmbeddingsRequest, EmbeddingsUpstream } from "../../core/embeddings/ports.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { postChat, v1Post } from "../chat-call.js";
import { safeUrl, type UpstreamEndpoint, upstreamMessage } from "../http.js";

/** The request body of `POST /v1/embeddings`: vectors asked as floats, whatever the client wants. */
export function openAiEmbeddingsBody(request: EmbeddingsRequest, upstreamModel: string): Record<string, unknown> {
  const input = request.inputs.map((i) => ("tokens" in i ? i.tokens : i.text));
  return {
    model: upstreamModel,
    input,
    encoding_format: "float",
    ...(request.dimensions !== null ? { dimensions: request.dimensions } : {}),
    ...(request.user !== null ? { user: request.user } : {}),
  };
}

/** A vector sent as base64 (little-endian float32s), as some servers answer whatever was asked. */
function decodeVector(encoded: string): number[] {
  const bytes = Buffer.from(encoded, "base64");
  const floats = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  return Array.from(floats);
}

/** The vectors of an embeddings answer in input order, and its reported prompt tokens. */
export function readEmbeddingsAnswer(body: unknown, url: string): EmbeddingsAnswer {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw new UpstreamError("retryable", `upstream answered no embeddings (${safeUrl(url)})`);
  const vectors: number[][] = new Array(data.length);
  data.forEach((item, position) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    const at = Number.isSafeInteger(index) && (index as number) >= 0 ? (index as number) : position;
    const vector = typeof embedding === "string" ? decodeVector(embedding) : embedding;
    if (!Array.isArray(vector) || at >= data.length) {
      throw new UpstreamError("retryable", `upstream answered a malformed embedding (${safeUrl(url)})`);
    }
    vectors[at] = vector as number[];
  });
  if (vectors.some((v) => v === undefined)) {
    throw new UpstreamError("retryable", `upstream answered embeddings out of order (${safeUrl(url)})`);
  }
  const prompt = (body as { usage?: { prompt_tokens?: unknown } })?.usage?.prompt_tokens;
  return { vectors, promptTokens: Number.isSafeInteger(prompt) && (prompt as number) >= 0 ? (prompt as number) : null };
}

/** `POST {base}/v1/embeddings` with the key as a Bearer token: any OpenAI-compatible server. */
export const openAiEmbeddingsUpstream: EmbeddingsUpstream<UpstreamEndpoint> = {
  untranslatable(request) {
    if (request.taskType !== null) return { field: "taskType", reason: "this model's upstream has no task types" };
    if (request.inputs.some((i) => "title" in i && i.title !== undefined)) {
      return { field: "title", reason: "this model's upstream takes no document title" };
    }
    const tokens = request.inputs.filter((i) => "tokens" in i).length;
    if (tokens > 0 && tokens < request.inputs.length) {
      return { field: "input", reason: "texts and token lists cannot be mixed in one request" };
    }
    return null;
  },

  async embed(channel, upstreamModel, request, signal) {
    const post = v1Post(channel.baseUrl, "embeddings", { authorization: `Bearer ${channel.key}` });
    const body = await postChat(channel, post, openAiEmbeddingsBody(request, upstreamModel), signal);
    const error = (body as { error?: unknown })?.error;
    if (error && typeof error === "object") {
      throw new UpstreamError("retryable", `upstream error: ${upstreamMessage(body, channel.key) ?? "error object"}`);
    }
    return readEmbeddingsAnswer(body, post.url);
  },
};
