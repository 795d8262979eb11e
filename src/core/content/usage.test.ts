import { describe, expect, it } from "vitest";
import { tokenUsage } from "../token-usage.js";
import { ContentAccount, usageFromMetadata } from "./usage.js";

const chunk = (text: string, usage?: Record<string, number>) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] } }],
  ...(usage ? { usageMetadata: usage } : {}),
});

describe("content usage", () => {
  it("reads Gemini's usage into buckets: the prompt's cached part apart, tool-use prompt as input, thoughts as reasoning", () => {
    expect(
      usageFromMetadata({
        promptTokenCount: 100,
        candidatesTokenCount: 40,
        thoughtsTokenCount: 25,
        cachedContentTokenCount: 60,
        totalTokenCount: 165,
      }),
    ).toEqual(tokenUsage({ input: 40, cacheRead: 60, output: 40, reasoning: 25 }));
    expect(
      usageFromMetadata({
        promptTokenCount: 100,
        cachedContentTokenCount: 60,
        toolUsePromptTokenCount: 30,
        candidatesTokenCount: 5,
      }),
    ).toEqual(tokenUsage({ input: 70, cacheRead: 60, output: 5 }));
  });

  it("clamps counts that cannot be counts, and names each", () => {
    const usage = usageFromMetadata({
      promptTokenCount: 50,
      cachedContentTokenCount: 80,
      candidatesTokenCount: -3,
      thoughtsTokenCount: 2.5,
    });
    expect(usage).toMatchObject(tokenUsage({ input: 0, cacheRead: 50, output: 0, reasoning: 2 }));
    expect(usage?.clamped).toEqual([
      "cachedContentTokenCount 80 is more than the 50 left of promptTokenCount: read as 50",
      "candidatesTokenCount -3 read as 0",
      "thoughtsTokenCount 2.5 read as 2",
    ]);
  });

  it("keeps the last cumulative usage of a stream instead of adding the chunks up", () => {
    const account = new ContentAccount();
    account.observe(chunk("a", { promptTokenCount: 10, candidatesTokenCount: 3 }));
    account.observe(chunk("b", { promptTokenCount: 10, candidatesTokenCount: 7 }));
    account.observe(chunk("c", { promptTokenCount: 10, candidatesTokenCount: 12 }));
    expect(account.usage).toEqual(tokenUsage({ input: 10, output: 12 }));
  });
});
