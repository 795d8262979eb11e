import { describe, expect, it } from "vitest";
import { estimatePromptTokens, MEDIA_PART_TOKENS } from "../../src/core/content/estimate.js";
import { holdUsage } from "../../src/core/content/hold.js";
import { modelLimits } from "../../src/core/content/model-limits.js";
import { settlementFor } from "../../src/core/content/settlement.js";
import { clientErrorFor } from "../../src/core/content/upstream-failure.js";
import { ContentAccount, usageFromMetadata } from "../../src/core/content/usage.js";
import { GatewayError } from "../../src/core/errors.js";
import { UpstreamError } from "../../src/core/upstream-error.js";

const chunk = (text: string, usage?: Record<string, number>) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] } }],
  ...(usage ? { usageMetadata: usage } : {}),
});

describe("content usage and billing rules", () => {
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

  it("keeps the last reported usage when a later chunk carries none", () => {
    const account = new ContentAccount();
    account.observe(chunk("a", { promptTokenCount: 10, candidatesTokenCount: 3 }));
    account.observe(chunk("b"));
    expect(settlementFor(account, 99)).toEqual({
      kind: "settle",
      usage: { promptTokens: 10, outputTokens: 3, cachedTokens: 0 },
      estimated: false,
    });
  });

  it("estimates from the text produced when no usage was reported", () => {
    const account = new ContentAccount();
    account.observe(chunk("12345678"));
    account.observe(chunk("9"));
    expect(settlementFor(account, 7)).toEqual({
      kind: "settle",
      usage: { promptTokens: 7, outputTokens: 3, cachedTokens: 0 },
      estimated: true,
    });
  });

  it("refunds when nothing was produced", () => {
    expect(settlementFor(new ContentAccount(), 7)).toEqual({ kind: "refund" });
  });

  it("estimates the prompt from text at four characters a token plus a fixed amount per media part", () => {
    const body = {
      systemInstruction: { parts: [{ text: "1234" }] },
      contents: [
        { role: "user", parts: [{ text: "12345" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }] },
        { role: "user", parts: [{ fileData: { fileUri: "gs://x" } }] },
      ],
    };
    expect(estimatePromptTokens(body)).toBe(3 + 2 * MEDIA_PART_TOKENS);
  });

  const limits = { maxInputTokens: 1_000_000, maxOutputTokens: 60_000, maxThinkingTokens: 20_000 };
  const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

  it("holds the output the request allows: maxOutputTokens (or the model's maximum) plus thinking, per candidate", () => {
    const body = { contents: [{ parts: [{ text: "abcd" }] }] };
    expect(holdUsage(body, bytes(body), limits)).toEqual({
      promptTokens: bytes(body),
      outputTokens: 60_000 + 20_000,
      cachedTokens: 0,
    });
    const bounded = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: 100 } } };
    expect(holdUsage(bounded, bytes(bounded), limits).outputTokens).toBe(150);
    const noThinking = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: 0 } } };
    expect(holdUsage(noThinking, bytes(noThinking), limits).outputTokens).toBe(50);
    const dynamic = { ...body, generationConfig: { maxOutputTokens: 50, thinkingConfig: { thinkingBudget: -1 } } };
    expect(holdUsage(dynamic, bytes(dynamic), limits).outputTokens).toBe(50 + 20_000);
    const four = { ...body, generationConfig: { maxOutputTokens: 50, candidateCount: 4 } };
    expect(holdUsage(four, bytes(four), limits).outputTokens).toBe(4 * (50 + 20_000));
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
    expect(holdUsage(functionResponse, bytes(functionResponse), limits).promptTokens).toBe(bytes(functionResponse));
    const inline = { contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] }] };
    expect(holdUsage(inline, bytes(inline), limits).promptTokens).toBe(bytes(inline) + MEDIA_PART_TOKENS);
    const file = { contents: [{ parts: [{ fileData: { fileUri: "gs://x" } }] }] };
    expect(holdUsage(file, bytes(file), limits).promptTokens).toBe(1_000_000);
    const cached = { contents: [{ parts: [{ text: "a" }] }], cachedContent: "cachedContents/abc" };
    expect(holdUsage(cached, bytes(cached), limits).promptTokens).toBe(1_000_000);
    expect(holdUsage(functionResponse, 5_000_000, limits).promptTokens).toBe(1_000_000);
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

  it("knows the published limits of the Gemini models and falls back to the configured ones", () => {
    expect(modelLimits("gemini-2.5-flash-preview-05-20", limits).maxThinkingTokens).toBe(24_576);
    expect(modelLimits("gemini-2.5-flash-lite", limits).maxOutputTokens).toBe(65_536);
    expect(modelLimits("gemini-2.5-pro", limits).maxThinkingTokens).toBe(32_768);
    expect(modelLimits("some-model", limits)).toBe(limits);
  });

  it("maps upstream failures to the status a client of Google's API expects", () => {
    const status = (kind: "retryable" | "refused" | "auth", s: number | null) =>
      clientErrorFor(new UpstreamError(kind, "x", { status: s })).status;
    expect(status("retryable", 429)).toBe(429);
    expect(status("retryable", 503)).toBe(503);
    expect(status("retryable", 500)).toBe(500);
    expect(status("retryable", 502)).toBe(502);
    expect(status("retryable", null)).toBe(502);
    expect(status("auth", 400)).toBe(503);
    expect(status("auth", 403)).toBe(503);
    expect(status("refused", 400)).toBe(400);
    expect(status("refused", 404)).toBe(404);
    expect(status("refused", 413)).toBe(400);
  });

  it("never passes on the gateway's own message naming the upstream address", () => {
    const err = clientErrorFor(new UpstreamError("retryable", "upstream unreachable (http://10.0.0.5:9000/v1beta)"));
    expect(err.message).not.toContain("10.0.0.5");
  });
});
