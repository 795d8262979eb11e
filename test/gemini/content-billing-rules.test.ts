import { describe, expect, it } from "vitest";
import { chargeUsage, estimatePromptTokens, MEDIA_PART_TOKENS } from "../../src/core/content/estimate.js";
import { settlementFor } from "../../src/core/content/settlement.js";
import { clientErrorFor } from "../../src/core/content/upstream-failure.js";
import { ContentAccount, usageFromMetadata } from "../../src/core/content/usage.js";
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

  it("charges up front for maxOutputTokens, or the default when the request sets none", () => {
    const body = { contents: [{ parts: [{ text: "abcd" }] }] };
    expect(chargeUsage(body, 8192)).toEqual({ promptTokens: 1, outputTokens: 8192, cachedTokens: 0 });
    expect(chargeUsage({ ...body, generationConfig: { maxOutputTokens: 50 } }, 8192).outputTokens).toBe(50);
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
