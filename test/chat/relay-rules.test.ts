import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  CHAT_MODEL,
  chatLedger,
  chatRequestLogs,
  lastChatCost,
  openAiClient,
  PRICE,
  quotaOf,
  SIM_KEY,
} from "./harness.js";

/** Waits (without a clock) until `check` holds, giving the gateway's background work a chance to run. */
async function eventually(check: () => Promise<boolean>, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("condition never held");
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`chat relay rules [${kind}]`, () => {
    let gw: TestGateway;
    let broken: Simulator;
    let healthy: Simulator;
    let hold: Promise<void> | null = null;
    const released: Array<() => void> = [];
    beforeAll(async () => {
      // One upstream whose OpenAI-compatible side always fails, one healthy Gemini upstream.
      broken = await startSimulator({ keys: [SIM_KEY], openaiChat: { status: 503 } });
      healthy = await startSimulator({
        keys: [SIM_KEY],
        gemini: { text: { beforeChunk: (index) => (index === 2 && hold ? hold : undefined) } },
      });
      gw = await startTestGateway(kind);

      await gw.gateway.ctx.prices.setPrice({ kind: "content", name: CHAT_MODEL, ...PRICE });
      await gw.createChannel({
        type: "openai-chat",
        baseUrl: broken.url,
        key: SIM_KEY,
        models: [CHAT_MODEL],
        priority: 10,
      });
      await gw.createChannel({ type: "gemini", baseUrl: healthy.url, key: SIM_KEY, models: [CHAT_MODEL], priority: 1 });
    });
    afterAll(async () => {
      for (const r of released) r();
      // After the test client abandoned a stream, its pooled keep-alive connections to the gateway
      // are not closed as idle by the HTTP server and would hold the close up until they time out.
      gw?.gateway.app.server.closeAllConnections();
      await gw?.close();
      await broken?.close();
      await healthy?.close();
    });

    it("fails over before the first byte to a channel of another type serving the same model", async () => {
      const user = await gw.createUser({ quota: 50_000_000 });
      const client = openAiClient(gw, user.key);
      const brokenBefore = broken.received.length;
      const answer = await client.chat.completions.create({
        model: CHAT_MODEL,
        messages: [{ role: "user", content: "Which channel answers?" }],
      });
      expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
      expect(broken.received.length).toBe(brokenBefore + 1);
      const { kinds } = await lastChatCost(gw, user.userId);
      expect(kinds).toEqual(["charge", "settle"]);
      // Channel keys never reach a log line.
      expect(gw.logs.join("\n")).not.toContain(SIM_KEY);
    });

    it("holds the worst case up front: too little quota is refused before any upstream call", async () => {
      const prompt = "x".repeat(400);
      // The hold: 400 bytes + 8 for the message, 10,000 output tokens times n = 2.
      const hold = quotaOf({ input: 408, output: 20_000, cached: 0 });
      const poor = await gw.createUser({ quota: hold - 1 });
      const before = broken.received.length + healthy.received.length;
      const params = {
        model: CHAT_MODEL,
        messages: [{ role: "user" as const, content: prompt }],
        max_tokens: 10_000,
        n: 2,
      };
      const err = await openAiClient(gw, poor.key)
        .chat.completions.create(params)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(broken.received.length + healthy.received.length).toBe(before);
      expect(await gw.balance(poor.userId)).toBe(hold - 1);

      const enough = await gw.createUser({ quota: hold });
      // The simulated Gemini model answers one of the two choices: the call fails (502) after the
      // hold, which is what is checked here.
      await openAiClient(gw, enough.key)
        .chat.completions.create(params)
        .catch(() => null);
      const rows = await chatLedger(gw, enough.userId);
      expect(rows[0]).toMatchObject({ kind: "charge", amount: -hold });
    });

    it("aborts the upstream call when the client leaves mid-stream, and bills what was produced", async () => {
      const user = await gw.createUser({ quota: 50_000_000 });
      let release = () => {};
      hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      released.push(release);
      // A plain HTTP client that goes away after the first event (the socket closes under the answer).
      const controller = new AbortController();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        signal: controller.signal,
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: "A long story [chunks=6]" }],
          stream: true,
        }),
      });
      const before = healthy.received.length;
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');
      controller.abort();
      const entry = healthy.received[before - 1];
      await eventually(async () => entry?.aborted === true);
      hold = null;
      release();
      await eventually(async () => (await lastChatCost(gw, user.userId)).kinds.length === 2);
      const { kinds, cost } = await lastChatCost(gw, user.userId);
      expect(kinds).toEqual(["charge", "settle"]);
      expect(cost).toBeGreaterThan(0);
      const logs = await chatRequestLogs(gw);
      expect(logs[logs.length - 1]?.status).toBe(499);
    });
  });
}
