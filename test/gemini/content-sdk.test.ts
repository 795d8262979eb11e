import { ApiError } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quotaForTokens } from "../../src/core/pricing.js";
import { tokenUsage } from "../../src/core/token-usage.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  type ContentHarness,
  contentLedger,
  contentRequestLogs,
  MODEL,
  netCost,
  postContent,
  SIM_KEY,
  sdkFor,
  startContentHarness,
  userText,
} from "./harness.js";

const PRICE = { input: 0.3, output: 2.5, cacheRead: 0.03 };

/** Google's usage in buckets: the prompt's cached part read from cache, thoughts billed as output. */
function geminiUsage(usage: any) {
  const cached = usage?.cachedContentTokenCount ?? 0;
  return tokenUsage({
    input: (usage?.promptTokenCount ?? 0) - cached,
    cacheRead: cached,
    output: usage?.candidatesTokenCount ?? 0,
    reasoning: usage?.thoughtsTokenCount ?? 0,
  });
}

/** Quota the usage of a Google answer costs at the given ratios. */
function expectedQuota(usage: any, groupRatio: number, channelRatio: number): number {
  return quotaForTokens(geminiUsage(usage), PRICE, { groupRatio, channelRatio, quotaPerUnit: 500_000 });
}

async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`content through the official Google client [${kind}]`, () => {
    let f: ContentHarness;
    beforeAll(async () => {
      f = await startContentHarness(kind);
      // A group with its own ratio, served by a channel with a price ratio other than 1.
      await f.gw.gateway.ctx.prices.setGroupRatio("gold", 1.5);
      await f.gw.createChannel({
        type: "gemini",
        baseUrl: f.sim.url,
        key: SIM_KEY,
        models: [MODEL],
        groups: ["gold"],
        priceRatio: 2,
      });
    });
    afterAll(async () => {
      await f?.close();
    });

    it("generateContent answers with text and bills usage x price x ratios exactly", async () => {
      const { userId, key } = await f.gw.createUser({ group: "gold", quota: 5_000_000 });
      const ai = sdkFor(f.gw, key);
      const res = await ai.models.generateContent({ model: MODEL, contents: "Write a line [thoughts] [cached]" });
      expect(res.text).toMatch(/\.$/);
      const usage = res.usageMetadata as any;
      expect(usage.thoughtsTokenCount).toBeGreaterThan(0);
      expect(usage.cachedContentTokenCount).toBeGreaterThan(0);
      const expected = expectedQuota(usage, 1.5, 2);
      expect(expected).toBeGreaterThan(0);

      const rows = await contentLedger(f.gw, userId);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "settle"]);
      expect(netCost(rows, rows[0]!.reference)).toBe(expected);
      expect(await f.gw.balance(userId)).toBe(5_000_000 - expected);
      expect(await f.gw.gateway.ctx.ledger.ledgerSum(userId)).toBe(5_000_000 - expected);

      const logs = (await contentRequestLogs(f.gw)).filter((l) => Number(l.user_id) === userId);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ model: MODEL, status: 200, surface: "content" });
      expect(Number(logs[0]!.quota)).toBe(expected);
      expect(Number(logs[0]!.prompt_tokens)).toBe(usage.promptTokenCount);
      expect(Number(logs[0]!.completion_tokens)).toBe(usage.candidatesTokenCount + usage.thoughtsTokenCount);
      expect(Number(logs[0]!.cached_tokens)).toBe(usage.cachedContentTokenCount);
    });

    it("generateContentStream yields every chunk and bills the last cumulative usage, not their sum", async () => {
      const { userId, key } = await f.gw.createUser({ group: "gold" });
      const ai = sdkFor(f.gw, key);
      const stream = await ai.models.generateContentStream({ model: MODEL, contents: "Tell me [chunks=4]" });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks).toHaveLength(4);
      expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
      expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe("STOP");
      const sync = await ai.models.generateContent({ model: MODEL, contents: "Tell me [chunks=4]" });
      expect(chunks.map((c) => c.text).join("")).toBe(sync.text);

      const last = chunks.at(-1)?.usageMetadata;
      const rows = await contentLedger(f.gw, userId);
      const streamRef = rows[0]!.reference;
      expect(netCost(rows, streamRef)).toBe(expectedQuota(last, 1.5, 2));
    });

    it("a bad key surfaces through the client as 401 UNAUTHENTICATED", async () => {
      const err = await apiErrorOf(
        sdkFor(f.gw, "sk-not-a-real-key").models.generateContent({ model: MODEL, contents: "hi" }),
      );
      expect(err.status).toBe(401);
      expect(JSON.parse(err.message)).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    });

    it("an unknown model surfaces through the client as 404 NOT_FOUND, and costs nothing", async () => {
      const { userId, key } = await f.gw.createUser();
      const err = await apiErrorOf(
        sdkFor(f.gw, key).models.generateContentStream({ model: "no-such-model", contents: "hi" }),
      );
      expect(err.status).toBe(404);
      expect(JSON.parse(err.message)).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
      expect(await contentLedger(f.gw, userId)).toEqual([]);
    });

    it("a model the token may not use is 403 PERMISSION_DENIED", async () => {
      const { key } = await f.gw.createUser({ token: { models: ["gemini-2.5-pro"] } });
      const err = await apiErrorOf(sdkFor(f.gw, key).models.generateContent({ model: MODEL, contents: "hi" }));
      expect(err.status).toBe(403);
      expect(JSON.parse(err.message).error.status).toBe("PERMISSION_DENIED");
    });

    it("not enough quota for the estimate is 403 PERMISSION_DENIED before any upstream call", async () => {
      const { userId, key } = await f.gw.createUser({ quota: 10 });
      const before = f.sim.received.length;
      const err = await apiErrorOf(sdkFor(f.gw, key).models.generateContent({ model: MODEL, contents: "hi" }));
      expect(err.status).toBe(403);
      expect(f.sim.received.length).toBe(before);
      expect(await f.gw.balance(userId)).toBe(10);
    });

    it("accepts the key from x-goog-api-key, x-api-key and ?key=, and refuses Authorization: Bearer alone", async () => {
      const { key } = await f.gw.createUser();
      const body = userText("hello");
      const carriers = [
        await postContent(f.gw, `${MODEL}:generateContent`, body, { "x-goog-api-key": key }),
        await postContent(f.gw, `${MODEL}:generateContent`, body, { "x-api-key": key }),
        await postContent(f.gw, `${MODEL}:generateContent?key=${encodeURIComponent(key)}`, body),
      ];
      for (const res of carriers) {
        expect(res.status).toBe(200);
        expect(((await res.json()) as any).candidates[0].content.parts[0].text).toMatch(/\.$/);
      }
      const bearer = await postContent(f.gw, `${MODEL}:generateContent`, body, { authorization: `Bearer ${key}` });
      expect(bearer.status).toBe(401);
      expect(await bearer.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    });

    it("an unknown method is 404 NOT_FOUND in Google's shape", async () => {
      const { key } = await f.gw.createUser();
      const res = await postContent(f.gw, `${MODEL}:countWords`, userText("hi"), { "x-goog-api-key": key });
      expect(res.status).toBe(404);
      expect((await res.json()) as any).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
    });

    it("never shows the channel key or the upstream address to the client", async () => {
      const { key } = await f.gw.createUser();
      const res = await postContent(f.gw, `${MODEL}:generateContent`, userText("hi [503]"), { "x-goog-api-key": key });
      const text = await res.text();
      expect(text).not.toContain(SIM_KEY);
      expect(text).not.toContain(f.sim.url);
      expect(f.gw.logs.join("\n")).not.toContain(SIM_KEY);
    });
  });
}
