import { describe, expect, it } from "vitest";
import { tokenUsage } from "../../core/token-usage.js";
import { usageFromWire } from "./answer.js";

describe("OpenAI chat usage in buckets", () => {
  it("takes cached and audio prompt tokens, reasoning and audio output out of their totals", () => {
    expect(
      usageFromWire({
        prompt_tokens: 2_000,
        completion_tokens: 300,
        prompt_tokens_details: { cached_tokens: 1_536, audio_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 200, audio_tokens: 40 },
      }),
    ).toEqual(
      tokenUsage({ input: 400, cacheRead: 1_536, audioInput: 64, output: 60, reasoning: 200, audioOutput: 40 }),
    );
  });

  it("reads DeepSeek's prompt_cache_hit_tokens as cached", () => {
    expect(usageFromWire({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64 })).toEqual(
      tokenUsage({ input: 36, cacheRead: 64, output: 5 }),
    );
  });

  it("clamps a part above its whole into it, so that no token is billed twice", () => {
    const usage = usageFromWire({
      prompt_tokens: 10,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 12 },
      completion_tokens_details: { reasoning_tokens: 9 },
    });
    expect(usage).toMatchObject(tokenUsage({ input: 0, cacheRead: 10, output: 0, reasoning: 5 }));
    expect(usage?.clamped).toHaveLength(2);
  });
});
