import { GatewayError } from "../errors.js";
import { estimateTextTokens } from "../metering/token-settlement.js";
import type { EmbeddingInput, EmbeddingsRequest } from "./ports.js";

/** Most inputs one request may embed on the OpenAI surface (OpenAI's own limit). */
export const MAX_INPUTS = 2048;
/** Most requests one `:batchEmbedContents` may hold (Google's own limit). */
export const MAX_BATCH_REQUESTS = 100;
/** Longest vector a request may ask for (the largest models answer 3072 or 4096). */
export const MAX_DIMENSIONS = 4096;

/** How a surface names the fields a refusal points at. */
export interface EmbeddingsFields {
  /** The inputs' field (`input`, `requests`). */
  inputs: string;
  /** The field of the `i`th input's text (`input[0]`, `requests[0].content`). */
  input(i: number): string;
  dimensions: string;
  maxInputs: number;
}

function invalid(field: string, rule: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${field} ${rule}.`, { param: field });
}

/**
 * Refuses what no upstream can embed, as a 400 naming the field, before any price is read: no
 * input, an empty text or token list, more inputs than the surface allows, a length of vector
 * that is not a whole number from 1 to MAX_DIMENSIONS.
 */
export function checkEmbeddingsRequest(request: EmbeddingsRequest, fields: EmbeddingsFields): EmbeddingsRequest {
  const { inputs } = request;
  if (inputs.length === 0) throw invalid(fields.inputs, "must hold at least one input");
  if (inputs.length > fields.maxInputs) throw invalid(fields.inputs, `may hold at most ${fields.maxInputs} inputs`);
  inputs.forEach((input, i) => {
    const field = fields.input(i);
    if ("text" in input && input.text.length === 0) throw invalid(field, "must not be empty");
    if ("tokens" in input) {
      if (input.tokens.length === 0) throw invalid(field, "must hold at least one token");
      if (!input.tokens.every((t) => Number.isSafeInteger(t) && t >= 0)) {
        throw invalid(field, "must hold token ids, whole numbers from 0");
      }
    }
  });
  const d = request.dimensions;
  if (d !== null && (!Number.isSafeInteger(d) || d < 1 || d > MAX_DIMENSIONS)) {
    throw invalid(fields.dimensions, `must be a whole number from 1 to ${MAX_DIMENSIONS}`);
  }
  return request;
}

function inputBound(input: EmbeddingInput): number {
  return "tokens" in input ? input.tokens.length : Buffer.byteLength(input.text, "utf8");
}

/**
 * The most input tokens the request can cost: no tokenizer makes more than one token of a byte,
 * so every byte of a text counts as one (a token list counts its length), plus two per input
 * for the marks a model may add at its ends.
 */
export function embeddingTokenBound(request: EmbeddingsRequest): number {
  return request.inputs.reduce((sum, input) => sum + inputBound(input) + 2, 0);
}

/**
 * The gateway's own count of the input tokens (four characters a token, a token list its
 * length): what a call is settled to when its upstream reports no usage (Gemini's embedding
 * methods report none).
 */
export function embeddingTokenCount(request: EmbeddingsRequest): number {
  return request.inputs.reduce(
    (sum, input) => sum + ("tokens" in input ? input.tokens.length : estimateTextTokens(input.text.length)),
    0,
  );
}
