import { describe, expect, it } from "vitest";
import { tokenUsage } from "../../core/token-usage.js";
import { AnthropicEventReader, usageFromAnthropic } from "./answer.js";

describe("Anthropic usage in buckets", () => {
  it("reads cache writes by duration from cache_creation, apart from input and cache reads", () => {
    expect(
      usageFromAnthropic({
        input_tokens: 1_200,
        cache_read_input_tokens: 50_000,
        cache_creation_input_tokens: 12_000,
        cache_creation: { ephemeral_5m_input_tokens: 10_000, ephemeral_1h_input_tokens: 2_000 },
        output_tokens: 800,
      }),
    ).toEqual(tokenUsage({ input: 1_200, cacheRead: 50_000, cacheWrite5m: 10_000, cacheWrite1h: 2_000, output: 800 }));
  });

  it("takes cache_creation_input_tokens as 5-minute writes when the split is not given", () => {
    expect(usageFromAnthropic({ input_tokens: 5, cache_creation_input_tokens: 300, output_tokens: 2 })).toEqual(
      tokenUsage({ input: 5, cacheWrite5m: 300, output: 2 }),
    );
  });

  it("clamps a negative or fractional count and names it", () => {
    const usage = usageFromAnthropic({ input_tokens: -4, cache_read_input_tokens: 10.5, output_tokens: 3 });
    expect(usage).toMatchObject(tokenUsage({ input: 0, cacheRead: 10, output: 3 }));
    expect(usage?.clamped).toEqual(["input_tokens -4 read as 0", "cache_read_input_tokens 10.5 read as 10"]);
  });

  it("keeps message_start's cache fields when message_delta leaves them out or sends null", () => {
    const reader = new AnthropicEventReader("claude");
    reader.read({
      type: "message_start",
      message: {
        id: "m",
        usage: { input_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 40, output_tokens: 1 },
      },
    });
    const events = reader.read({
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 25, cache_read_input_tokens: null },
    });
    expect(events[0]).toEqual({
      type: "usage",
      usage: tokenUsage({ input: 7, cacheRead: 100, cacheWrite5m: 40, output: 25 }),
    });
  });
});
