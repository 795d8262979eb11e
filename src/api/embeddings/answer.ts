import type { EmbeddingsResult } from "../../core/embeddings/embeddings-kind.js";

/** A vector as base64 of its little-endian float32s, as OpenAI encodes it. */
export function base64Vector(vector: number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

/** The answer of `POST /v1/embeddings`, as OpenAI writes it, in JSON text. */
export function embeddingsAnswerText(result: EmbeddingsResult, model: string, format: "float" | "base64"): string {
  const data = result.vectors.map((vector, index) => ({
    object: "embedding",
    index,
    embedding: format === "base64" ? base64Vector(vector) : vector,
  }));
  const usage = { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens };
  return JSON.stringify({ object: "list", data, model, usage });
}
