/** What a content model can take and give, in tokens: the bounds of the hold before a call. */
export interface ModelLimits {
  /** The model's context window: no prompt (cached content included) is longer. */
  maxInputTokens: number;
  /** The most output tokens one candidate may have (`maxOutputTokens` may not exceed it). */
  maxOutputTokens: number;
  /** The most thinking tokens one candidate may spend; 0 for a model that does not think. */
  maxThinkingTokens: number;
}

/** Most candidates one request may ask for (`generationConfig.candidateCount`). */
export const MAX_CANDIDATE_COUNT = 8;

/** Published limits of the Gemini models the gateway knows; a model name may extend one (`-preview-...`). */
const KNOWN: ReadonlyArray<[string, ModelLimits]> = [
  ["gemini-2.5-pro", { maxInputTokens: 1_048_576, maxOutputTokens: 65_536, maxThinkingTokens: 32_768 }],
  ["gemini-2.5-flash-lite", { maxInputTokens: 1_048_576, maxOutputTokens: 65_536, maxThinkingTokens: 24_576 }],
  ["gemini-2.5-flash", { maxInputTokens: 1_048_576, maxOutputTokens: 65_536, maxThinkingTokens: 24_576 }],
  ["gemini-2.0-flash-lite", { maxInputTokens: 1_048_576, maxOutputTokens: 8_192, maxThinkingTokens: 0 }],
  ["gemini-2.0-flash", { maxInputTokens: 1_048_576, maxOutputTokens: 8_192, maxThinkingTokens: 0 }],
];

/**
 * The limits of `model`: those of the longest known name it starts with, else the configured
 * defaults (set them to the largest model the channels serve).
 */
export function modelLimits(model: string, defaults: ModelLimits): ModelLimits {
  let best: [string, ModelLimits] | undefined;
  for (const entry of KNOWN) {
    if (model.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best ? best[1] : defaults;
}
