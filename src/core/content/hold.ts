import { GatewayError } from "../errors.js";
import { type TokenUsage, tokenUsage } from "../token-usage.js";
import { MEDIA_PART_TOKENS } from "./estimate.js";
import { MAX_CANDIDATE_COUNT, type ModelLimits } from "./model-limits.js";

/**
 * The hold of a content call: the most it can cost, so that no answer can take a balance further
 * down than the hold already did.
 *
 * - Prompt: one token per byte of the whole request body (a token is at least one byte of text;
 *   inline data counts its base64 characters), plus the fixed cost of an image for each inline
 *   part (a tiny image still costs it), and never more than the model's context window. A body
 *   with `fileData` parts or `cachedContent` holds the whole context window: their size is not in
 *   the body.
 * - Output, per candidate: `maxOutputTokens` (or the model's maximum when unset) plus the thinking
 *   budget (`thinkingBudget`, else the model's maximum thinking), since thinking is billed as
 *   output; times `candidateCount`.
 */
export function holdUsage(body: unknown, bodyBytes: number, limits: ModelLimits): TokenUsage {
  const config = ((body as { generationConfig?: unknown })?.generationConfig ?? {}) as Record<string, unknown>;
  const maxOutput = requestedInt(config.maxOutputTokens, "generationConfig.maxOutputTokens", limits.maxOutputTokens);
  const candidates = requestedInt(config.candidateCount, "generationConfig.candidateCount", MAX_CANDIDATE_COUNT);
  const thinkingConfig = (config.thinkingConfig ?? {}) as Record<string, unknown>;
  const budget = thinkingConfig.thinkingBudget;
  if (typeof budget === "number" && !Number.isSafeInteger(budget)) {
    throw invalid("generationConfig.thinkingConfig.thinkingBudget", "must be a safe integer");
  }
  // A budget of -1 (dynamic) or none lets the model think as much as it can; above its maximum it is capped.
  const thinking =
    typeof budget === "number" && budget >= 0 ? Math.min(budget, limits.maxThinkingTokens) : limits.maxThinkingTokens;
  // Every token in the plain buckets: the hold prices each side at its dearest rate (holdQuotaForTokens).
  return tokenUsage({
    input: promptTokenBound(body, bodyBytes, limits.maxInputTokens),
    output: ((maxOutput ?? limits.maxOutputTokens) + thinking) * (candidates ?? 1),
  });
}

/** Upper bound of the prompt's tokens (see `holdUsage`). */
export function promptTokenBound(body: unknown, bodyBytes: number, maxInputTokens: number): number {
  const b = (body ?? {}) as { contents?: unknown; systemInstruction?: unknown; cachedContent?: unknown };
  if (b.cachedContent !== undefined && b.cachedContent !== null) return maxInputTokens;
  const contents = Array.isArray(b.contents) ? [...b.contents] : [];
  if (b.systemInstruction) contents.push(b.systemInstruction);
  let media = 0;
  for (const content of contents) {
    const parts = (content as { parts?: unknown })?.parts;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const p = part as { inlineData?: unknown; fileData?: unknown };
      if (p?.fileData) return maxInputTokens;
      if (p?.inlineData) media += 1;
    }
  }
  return Math.min(maxInputTokens, Math.max(0, Math.ceil(bodyBytes)) + media * MEDIA_PART_TOKENS);
}

function invalid(field: string, rule: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${field} ${rule}.`, { param: field });
}

/** A positive integer field of the request, at most `max`; undefined when absent. */
function requestedInt(value: unknown, field: string, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw invalid(field, "must be a positive safe integer");
  }
  if (value > max) throw invalid(field, `must be at most ${max} for this model`);
  return value;
}
