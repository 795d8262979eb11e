import { describe, expect, it } from "vitest";
import type { ChatRequest } from "./canonical.js";
import { holdUsage, THINKING_BUDGET } from "./estimate.js";

function request(extra: Partial<ChatRequest>): ChatRequest {
  return {
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hello" }] }],
    tools: [],
    toolChoice: null,
    maxOutputTokens: 100,
    temperature: null,
    topP: null,
    stop: [],
    n: 1,
    seed: null,
    user: null,
    responseFormat: { type: "text" },
    fieldNames: {},
    ...extra,
  } as ChatRequest;
}

describe("the chat hold", () => {
  it("holds the output limit of each choice", () => {
    expect(holdUsage(request({ n: 2 }), 4096).output).toBe(200);
    expect(holdUsage(request({ maxOutputTokens: null }), 4096).output).toBe(4096);
  });

  it("holds a reasoning effort's thinking budget on top of the output limit, as it is billed", () => {
    expect(holdUsage(request({ reasoningEffort: "high" }), 4096).output).toBe(100 + THINKING_BUDGET.high);
    expect(holdUsage(request({ reasoningEffort: "minimal", n: 2 }), 4096).output).toBe(
      2 * (100 + THINKING_BUDGET.minimal),
    );
  });
});
