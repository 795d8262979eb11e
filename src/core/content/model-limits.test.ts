import { describe, expect, it } from "vitest";
import { modelLimits } from "./model-limits.js";

const limits = { maxInputTokens: 1_000_000, maxOutputTokens: 60_000, maxThinkingTokens: 20_000 };

describe("content model limits", () => {
  it("knows the published limits of the Gemini models and falls back to the configured ones", () => {
    expect(modelLimits("gemini-2.5-flash-preview-05-20", limits).maxThinkingTokens).toBe(24_576);
    expect(modelLimits("gemini-2.5-flash-lite", limits).maxOutputTokens).toBe(65_536);
    expect(modelLimits("gemini-2.5-pro", limits).maxThinkingTokens).toBe(32_768);
    expect(modelLimits("some-model", limits)).toBe(limits);
  });
});
