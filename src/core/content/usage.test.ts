import { describe, expect, it } from "vitest";
import { ContentAccount, usageFromMetadata } from "./usage.js";

const chunk = (text: string, usage?: Record<string, number>) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] } }],
  ...(usage ? { usageMetadata: usage } : {}),
});

describe("content usage", () => {
  it("bills candidates plus thoughts as output, and reports cached prompt tokens", () => {
    expect(
      usageFromMetadata({
        promptTokenCount: 100,
        candidatesTokenCount: 40,
        thoughtsTokenCount: 25,
        cachedContentTokenCount: 60,
        totalTokenCount: 165,
      }),
    ).toEqual({ promptTokens: 100, outputTokens: 65, cachedTokens: 60 });
  });

  it("keeps the last cumulative usage of a stream instead of adding the chunks up", () => {
    const account = new ContentAccount();
    account.observe(chunk("a", { promptTokenCount: 10, candidatesTokenCount: 3 }));
    account.observe(chunk("b", { promptTokenCount: 10, candidatesTokenCount: 7 }));
    account.observe(chunk("c", { promptTokenCount: 10, candidatesTokenCount: 12 }));
    expect(account.usage).toEqual({ promptTokens: 10, outputTokens: 12, cachedTokens: 0 });
  });
});
