import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { tokenUsage } from "../token-usage.js";
import { MEDIA_PART_TOKENS } from "./estimate.js";
import { holdUsage } from "./hold.js";

const limits = { maxInputTokens: 1_000_000, maxOutputTokens: 60_000, maxThinkingTokens: 20_000 };
const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

describe("content hold", () => {
  it("holds the output the request allows: maxOutputTokens (or the model's maximum) plus thinking, per candidate", () => {
    const body = { contents: [{ parts: [{ text: "abcd" }] }] };
    expect(holdUsage(body, bytes(body), limits)).toEqual(tokenUsage({ input: bytes(body), output: 60_000 + 20_000 }));
    const bounded = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: 100 } } };
    expect(holdUsage(bounded, bytes(bounded), limits).output).toBe(150);
    const noThinking = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: 0 } } };
    expect(holdUsage(noThinking, bytes(noThinking), limits).output).toBe(50);
    const dynamic = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: -1 } } };
    expect(holdUsage(dynamic, bytes(dynamic), limits).output).toBe(50 + 20_000);
    const four = { ...body, generationConfig: { maxOutputTokens: 50, candidateCount: 4 } };
    expect(holdUsage(four, bytes(four), limits).output).toBe(4 * (50 + 20_000));
  });

  it("holds every byte of the body as prompt, a media part at least an image, fileData and cachedContent at the window", () => {
    const functionResponse = {
      contents: [
        { role: "user", parts: [{ text: "call it" }] },
        { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "f", response: { blob: "x".repeat(5_000) } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: "f", description: "y".repeat(300) }] }],
    };
    expect(holdUsage(functionResponse, bytes(functionResponse), limits).input).toBe(bytes(functionResponse));
    const inline = { contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] }] };
    expect(holdUsage(inline, bytes(inline), limits).input).toBe(bytes(inline) + MEDIA_PART_TOKENS);
    const file = { contents: [{ parts: [{ fileData: { fileUri: "gs://x" } }] }] };
    expect(holdUsage(file, bytes(file), limits).input).toBe(1_000_000);
    const cached = { contents: [{ parts: [{ text: "a" }] }], cachedContent: "cachedContents/abc" };
    expect(holdUsage(cached, bytes(cached), limits).input).toBe(1_000_000);
    expect(holdUsage(functionResponse, 5_000_000, limits).input).toBe(1_000_000);
  });

  it("refuses output fields beyond the model's maximum or a safe integer, naming the field", () => {
    const body = (generationConfig: object) => ({ contents: [{ parts: [{ text: "a" }] }], generationConfig });
    for (const [config, field] of [
      [{ maxOutputTokens: 9007199254740991 }, "generationConfig.maxOutputTokens"],
      [{ maxOutputTokens: 1e300 }, "generationConfig.maxOutputTokens"],
      [{ maxOutputTokens: 60_001 }, "generationConfig.maxOutputTokens"],
      [{ candidateCount: 9 }, "generationConfig.candidateCount"],
      [{ thinkingConfig: { thinkingBudget: 1e300 } }, "generationConfig.thinkingConfig.thinkingBudget"],
    ] as const) {
      const err = (() => {
        try {
          holdUsage(body(config), 100, limits);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ status: 400, param: field });
    }
  });
});
