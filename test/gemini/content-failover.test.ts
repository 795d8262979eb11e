import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quotaForTokens } from "../../src/core/pricing.js";
import { tokenUsage } from "../../src/core/token-usage.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  type ContentHarness,
  contentLedger,
  contentRequestLogs,
  netCost,
  SIM_KEY,
  sdkFor,
  startContentHarness,
} from "./harness.js";

const PRO = "gemini-2.5-pro";
const LITE = "gemini-2.5-flash-lite";
const LONELY = "lonely-model";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`content failover between channels [${kind}]`, () => {
    let f: ContentHarness;
    let overloaded: Simulator;
    let overloadedChannel: number;
    let healthyChannel: number;
    beforeAll(async () => {
      f = await startContentHarness(kind);
      overloaded = await startSimulator({ keys: [SIM_KEY], gemini: { text: { status: 503 } } });
      // PRO: a preferred channel that is overloaded, then a healthy one with another price ratio.
      overloadedChannel = await f.gw.createChannel({
        type: "gemini",
        baseUrl: overloaded.url,
        key: SIM_KEY,
        models: [PRO],
        priority: 10,
      });
      healthyChannel = await f.gw.createChannel({
        type: "gemini",
        baseUrl: f.sim.url,
        models: [PRO],
        priceRatio: 3,
        key: SIM_KEY,
      });
      // LITE: a preferred channel whose key the upstream refuses, then a good one.
      await f.gw.createChannel({
        type: "gemini",
        baseUrl: f.sim.url,
        key: "revoked-key",
        models: [LITE],
        priority: 10,
      });
      await f.gw.createChannel({ type: "gemini", baseUrl: f.sim.url, key: SIM_KEY, models: [LITE] });
      // LONELY: only a channel with a refused key.
      await f.gw.gateway.ctx.prices.setPrice({
        kind: "content",
        name: LONELY,
        inputPerMillion: 1,
        outputPerMillion: 1,
      });
      await f.gw.createChannel({ type: "gemini", baseUrl: f.sim.url, key: "revoked-key", models: [LONELY] });
    });
    afterAll(async () => {
      await f?.close();
      await overloaded?.close();
    });

    it("moves to the next channel on an upstream 503 before the first byte and bills at the answering channel's ratio", async () => {
      const { userId, key } = await f.gw.createUser();
      const stream = await sdkFor(f.gw, key).models.generateContentStream({ model: PRO, contents: "failover" });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks).toHaveLength(3);
      expect(overloaded.received).toHaveLength(1);

      const usage = chunks.at(-1)!.usageMetadata!;
      const expected = quotaForTokens(
        tokenUsage({ input: usage.promptTokenCount!, output: usage.candidatesTokenCount! }),
        { input: 1.25, output: 10 },
        { groupRatio: 1, channelRatio: 3, quotaPerUnit: 500_000 },
      );
      const rows = await contentLedger(f.gw, userId);
      expect(netCost(rows, rows[0]!.reference)).toBe(expected);
      const log = (await contentRequestLogs(f.gw)).find((l) => Number(l.user_id) === userId);
      expect(Number(log?.channel_id)).toBe(healthyChannel);
      expect(Number(log?.channel_id)).not.toBe(overloadedChannel);
    });

    it("moves on when the upstream refuses a channel's key, and the client never sees a 400", async () => {
      const { key } = await f.gw.createUser();
      const res = await sdkFor(f.gw, key).models.generateContent({ model: LITE, contents: "key trouble" });
      expect(res.text).toMatch(/\.$/);
    });

    it("answers 503 UNAVAILABLE, refunded, when the only channel's key is refused", async () => {
      const { userId, key } = await f.gw.createUser();
      const res = await fetch(`${f.gw.url}/v1beta/models/${LONELY}:generateContent`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": key },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      });
      expect(res.status).toBe(503);
      expect((await res.json()) as any).toMatchObject({ error: { code: 503, status: "UNAVAILABLE" } });
      const rows = await contentLedger(f.gw, userId);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "refund"]);
      expect(netCost(rows, rows[0]!.reference)).toBe(0);
    });

    it("answers 503 UNAVAILABLE when a known model has no enabled channel", async () => {
      const { key } = await f.gw.createUser();
      const id = await f.gw.createChannel({
        type: "gemini",
        baseUrl: f.sim.url,
        key: SIM_KEY,
        models: ["parked-model"],
      });
      await f.gw.admin("PATCH", `/channels/${id}`, { status: "disabled" });
      await f.gw.gateway.ctx.prices.setPrice({
        kind: "content",
        name: "parked-model",
        inputPerMillion: 1,
        outputPerMillion: 1,
      });
      const res = await fetch(`${f.gw.url}/v1beta/models/parked-model:generateContent?key=${key}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }),
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as any).error.status).toBe("UNAVAILABLE");
    });
  });
}
