import { describe, expect, it } from "vitest";
import { ContentAccount } from "../content/usage.js";
import { tokenUsage } from "../token-usage.js";
import { settlementFor } from "./token-settlement.js";

const chunk = (text: string, usage?: Record<string, number>) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] } }],
  ...(usage ? { usageMetadata: usage } : {}),
});

describe("content settlement", () => {
  it("keeps the last reported usage when a later chunk carries none", () => {
    const account = new ContentAccount();
    account.observe(chunk("a", { promptTokenCount: 10, candidatesTokenCount: 3 }));
    account.observe(chunk("b"));
    expect(settlementFor(account, 99)).toEqual({
      kind: "settle",
      usage: tokenUsage({ input: 10, output: 3 }),
      estimated: false,
    });
  });

  it("estimates from the text produced when no usage was reported", () => {
    const account = new ContentAccount();
    account.observe(chunk("12345678"));
    account.observe(chunk("9"));
    expect(settlementFor(account, 7)).toEqual({
      kind: "settle",
      usage: tokenUsage({ input: 7, output: 3 }),
      estimated: true,
    });
  });

  it("takes a report of no tokens at all for an answer that delivered text as no report", () => {
    const account = new ContentAccount();
    account.observe(chunk("12345678", { promptTokenCount: 0, candidatesTokenCount: 0 }));
    expect(settlementFor(account, 7)).toEqual({
      kind: "settle",
      usage: tokenUsage({ input: 7, output: 2 }),
      estimated: true,
    });
  });

  it("keeps a report of output only, or of input only, as reported", () => {
    const account = new ContentAccount();
    account.observe(chunk("12345678", { promptTokenCount: 0, candidatesTokenCount: 5 }));
    expect(settlementFor(account, 7)).toMatchObject({ usage: { input: 0, output: 5 }, estimated: false });
  });

  it("refunds when nothing was produced", () => {
    expect(settlementFor(new ContentAccount(), 7)).toEqual({ kind: "refund" });
  });
});
