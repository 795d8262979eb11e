import { ApiError } from "@google/genai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { estimatePromptTokens } from "../../src/core/content/estimate.js";
import { quotaForTokens } from "../../src/core/pricing.js";
import { tokenUsage } from "../../src/core/token-usage.js";
import type { GeminiTextSimOptions } from "../../src/simulator/options.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  type ContentHarness,
  contentLedger,
  contentRequestLogs,
  MODEL,
  netCost,
  postContent,
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
const RATIOS = { groupRatio: 1, channelRatio: 1, quotaPerUnit: 500_000 };

function quotaOf(usage: any): number {
  return quotaForTokens(geminiUsage(usage), PRICE, RATIOS);
}

/** A gate the simulated upstream waits at before writing chunk `index`. */
function holdAt(text: GeminiTextSimOptions, index: number, seen: string[] = []) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  text.beforeChunk = async (i) => {
    seen.push(`upstream writes chunk ${i}`);
    if (i === index) await gate;
  };
  return release;
}

/** Settles once the call's charge has been settled or refunded. */
async function finishedLedger(f: ContentHarness, userId: number) {
  let rows: Awaited<ReturnType<typeof contentLedger>> = [];
  await vi.waitFor(
    async () => {
      rows = await contentLedger(f.gw, userId);
      expect(rows.length).toBe(2);
    },
    { timeout: 10_000 },
  );
  return rows;
}

async function drain(stream: AsyncGenerator<any>) {
  const chunks: any[] = [];
  let error: unknown = null;
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (err) {
    error = err;
  }
  return { chunks, error };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`content streaming [${kind}]`, () => {
    let f: ContentHarness;
    let text: GeminiTextSimOptions;
    beforeAll(async () => {
      f = await startContentHarness(kind);
      text = f.sim.state.options.gemini!.text!;
    });
    afterEach(() => {
      text.beforeChunk = undefined;
    });
    afterAll(async () => {
      await f?.close();
    });

    it("with a slow upstream, the client holds the first event before the upstream has finished", async () => {
      const { key } = await f.gw.createUser();
      const seen: string[] = [];
      const release = holdAt(text, 1, seen);
      const stream = await sdkFor(f.gw, key).models.generateContentStream({ model: MODEL, contents: "slowly" });
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      seen.push("client holds chunk 0");
      expect(first.value?.text).toBeTruthy();
      release();
      const rest = [];
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
      expect(rest).toHaveLength(2);
      expect(seen).toEqual([
        "upstream writes chunk 0",
        "upstream writes chunk 1",
        "client holds chunk 0",
        "upstream writes chunk 2",
      ]);
    });

    it("a client that disconnects mid-stream aborts the upstream call and pays for what was produced", async () => {
      const { userId, key } = await f.gw.createUser();
      const release = holdAt(text, 1);
      const controller = new AbortController();
      const stream = await sdkFor(f.gw, key).models.generateContentStream({
        model: MODEL,
        contents: "I will leave early",
        config: { abortSignal: controller.signal },
      });
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      const upstreamCall = f.sim.received.at(-1)!;
      controller.abort();
      await vi.waitFor(() => expect(upstreamCall.aborted).toBe(true), { timeout: 10_000 });
      release();

      const rows = await finishedLedger(f, userId);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "settle"]);
      expect(netCost(rows, rows[0]!.reference)).toBe(quotaOf(first.value?.usageMetadata));
      await vi.waitFor(async () => {
        const log = (await contentRequestLogs(f.gw)).find((l) => Number(l.user_id) === userId);
        expect(log?.status).toBe(499);
      });
    });

    it("an upstream cut mid-stream ends the answer with a final error event and bills the partial usage", async () => {
      const { userId, key } = await f.gw.createUser();
      const stream = await sdkFor(f.gw, key).models.generateContentStream({
        model: MODEL,
        contents: "[chunks=4] [cut]",
      });
      const { chunks, error } = await drain(stream);
      expect(chunks).toHaveLength(2);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(502);
      const rows = await finishedLedger(f, userId);
      expect(netCost(rows, rows[0]!.reference)).toBe(quotaOf(chunks[1].usageMetadata));
    });

    it("a stream that closes cleanly before its final chunk still ends with an error event, not a clean end", async () => {
      const { userId, key } = await f.gw.createUser();
      const stream = await sdkFor(f.gw, key).models.generateContentStream({
        model: MODEL,
        contents: "[chunks=4] [truncate]",
      });
      const { chunks, error } = await drain(stream);
      expect(chunks).toHaveLength(2);
      expect((error as ApiError).status).toBe(502);
      const rows = await finishedLedger(f, userId);
      expect(netCost(rows, rows[0]!.reference)).toBe(quotaOf(chunks[1].usageMetadata));
    });

    it("writes the final error event as its own clean SSE block after the chunks", async () => {
      const { key } = await f.gw.createUser();
      const res = await postContent(f.gw, `${MODEL}:streamGenerateContent?alt=sse`, userText("[error-event]"), {
        "x-goog-api-key": key,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const body = await res.text();
      expect(body.endsWith("\r\n\r\n")).toBe(true);
      const blocks = body.slice(0, -4).split("\r\n\r\n");
      for (const block of blocks) expect(block).toMatch(/^data: \{.*\}$/);
      const events = blocks.map((b) => JSON.parse(b.slice(6)));
      expect(events[0].candidates).toBeDefined();
      expect(events.at(-1)).toMatchObject({ error: { code: 500, status: "INTERNAL" } });
    });

    it("without alt=sse the stream is one JSON array of the chunks", async () => {
      const { key } = await f.gw.createUser();
      const res = await postContent(f.gw, `${MODEL}:streamGenerateContent`, userText("array please"), {
        "x-goog-api-key": key,
      });
      expect(res.status).toBe(200);
      const chunks = JSON.parse(await res.text());
      expect(chunks).toHaveLength(3);
      expect(new Set(chunks.map((c: any) => c.responseId)).size).toBe(1);
      expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
    });

    it("an upstream 429 before the first byte is 429 RESOURCE_EXHAUSTED and fully refunded", async () => {
      const { userId, key } = await f.gw.createUser();
      const stream = sdkFor(f.gw, key).models.generateContentStream({ model: MODEL, contents: "busy [429]" });
      const error = await stream.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(429);
      expect(JSON.parse((error as ApiError).message).error.status).toBe("RESOURCE_EXHAUSTED");
      const rows = await contentLedger(f.gw, userId);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "refund"]);
      expect(netCost(rows, rows[0]!.reference)).toBe(0);
    });

    it("an upstream 503 before the first byte of a synchronous call is 503 UNAVAILABLE and refunded", async () => {
      const { userId, key } = await f.gw.createUser();
      const res = await postContent(f.gw, `${MODEL}:generateContent`, userText("[503]"), { "x-goog-api-key": key });
      expect(res.status).toBe(503);
      expect((await res.json()) as any).toMatchObject({ error: { code: 503, status: "UNAVAILABLE" } });
      expect(netCost(await contentLedger(f.gw, userId), (await contentLedger(f.gw, userId))[0]!.reference)).toBe(0);
    });

    it("a safety block is relayed as a 200 without candidates and bills the prompt only", async () => {
      const { userId, key } = await f.gw.createUser();
      const res = await sdkFor(f.gw, key).models.generateContent({ model: MODEL, contents: "something bad [blocked]" });
      expect(res.promptFeedback?.blockReason).toBe("SAFETY");
      expect(res.candidates).toBeUndefined();
      const rows = await contentLedger(f.gw, userId);
      expect(netCost(rows, rows[0]!.reference)).toBe(quotaOf(res.usageMetadata));
    });

    it("a stream without usageMetadata is billed on an estimate, and the estimate is logged", async () => {
      const { userId, key } = await f.gw.createUser();
      const body = userText("no usage here [nousage]");
      const stream = await sdkFor(f.gw, key).models.generateContentStream({ model: MODEL, contents: body.contents });
      const { chunks } = await drain(stream);
      const produced = chunks.map((c) => c.text).join("");
      const expected = quotaForTokens(
        tokenUsage({ input: estimatePromptTokens(body), output: Math.ceil(produced.length / 4) }),
        PRICE,
        RATIOS,
      );
      const rows = await finishedLedger(f, userId);
      expect(netCost(rows, rows[0]!.reference)).toBe(expected);
      expect(f.gw.logs.some((line) => line.includes("content usage estimated"))).toBe(true);
    });
  });
}
