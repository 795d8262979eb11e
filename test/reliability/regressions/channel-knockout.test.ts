import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../../src/core/upstream-error.js";
import { ChannelHealth } from "../../../src/routing/channel-health.js";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { HAS_PG } from "../../support/postgres.js";
import { CONTENT_BODY, callGateway, googleKey, spendingRows } from "../harness.js";

/**
 * One tenant cannot switch a shared channel off for everyone. Before: five `:generateContent`
 * calls whose `tools` nest 20,000 deep made the gateway's own serialiser throw, the error was filed
 * as "upstream unreachable", and the channel was disabled for every user until the next probe; a
 * channel whose concurrency slots were all busy counted as failing too.
 */
const MODEL = "gemini-2.5-flash";
const PATH = `/v1beta/models/${MODEL}:generateContent`;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`a shared channel against one tenant [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let release: () => void = () => {};
    let held: Promise<void> | null = null;
    beforeAll(async () => {
      sim = await startSimulator({
        seed: 9,
        // While `held` is set, answers wait at their first chunk: the calls in flight keep their slot.
        gemini: { text: { beforeChunk: (i) => (i === 0 && held ? held : undefined) } },
      });
      gw = await startTestGateway(kind, {
        logLevel: "warn",
        routing: { disableAfterFailures: 2, disableMinUsers: 1, slotWaitMs: 20 },
      });
    });
    afterAll(async () => {
      release();
      await gw?.close();
      await sim?.close();
    });

    const statusOf = async (id: number) => (await gw.gateway.ctx.channels.get(id))?.status;

    it("a body nested 20,000 deep, sent again and again, is refused with a 400 and leaves the channel on", async () => {
      const group = "nest";
      const id = await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: [MODEL], groups: [group] });
      const attacker = await gw.createUser({ quota: 100, group });
      const other = await gw.createUser({ quota: 50_000_000, group });
      const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
      const body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":${deep}}`;
      for (let i = 0; i < 5; i++) {
        const res = await callGateway(gw.url, "POST", PATH, {
          headers: { ...googleKey(attacker.key), "content-type": "application/json" },
          body,
        });
        expect(res.status, res.text).toBe(400);
        expect(res.body.error.status).toBe("INVALID_ARGUMENT");
        expect(res.body.error.message).toContain("64 levels");
      }
      await gw.gateway.ctx.health.flush();
      expect(await statusOf(id)).toBe("enabled");
      expect((await gw.gateway.ctx.channels.get(id))?.failureCount).toBe(0);
      expect(sim.received.filter((r) => r.protocol === "gemini")).toHaveLength(0);
      expect(await spendingRows(gw, attacker.userId)).toEqual([]);
      const answer = await callGateway(gw.url, "POST", PATH, { headers: googleKey(other.key), body: CONTENT_BODY });
      expect(answer.status).toBe(200);
    });

    it("calls turned away because every slot of the channel is busy do not count against it", async () => {
      const group = "busy";
      const id = await gw.createChannel({
        type: "gemini",
        baseUrl: sim.url,
        models: [MODEL],
        groups: [group],
        settings: { concurrency: 1 },
      });
      const users = await Promise.all([1, 2, 3].map(() => gw.createUser({ quota: 50_000_000, group })));
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holder = callGateway(gw.url, "POST", PATH, { headers: googleKey(users[0]!.key), body: CONTENT_BODY });
      // The first call holds the only slot; the others wait 20 ms for it and are turned away.
      await waitUntil(() => gw.gateway.ctx.slots.inUse(id) === 1);
      const turnedAway = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          callGateway(gw.url, "POST", PATH, { headers: googleKey(users[i % 3]!.key), body: CONTENT_BODY }),
        ),
      );
      for (const res of turnedAway) expect(res.status, res.text).toBeGreaterThanOrEqual(500);
      held = null;
      release();
      expect((await holder).status).toBe(200);
      await gw.gateway.ctx.health.flush();
      expect(await statusOf(id)).toBe("enabled");
      expect((await gw.gateway.ctx.channels.get(id))?.failureCount).toBe(0);
      const after = await callGateway(gw.url, "POST", PATH, { headers: googleKey(users[2]!.key), body: CONTENT_BODY });
      expect(after.status).toBe(200);
    });

    it("calls the client abandons while the channel works on them do not count against it", async () => {
      const group = "gone";
      const id = await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: [MODEL], groups: [group] });
      const users = await Promise.all([1, 2, 3].map(() => gw.createUser({ quota: 50_000_000, group })));
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      for (const u of users) {
        const controller = new AbortController();
        const call = fetch(`${gw.url}${PATH}`, {
          method: "POST",
          headers: { "x-goog-api-key": u.key, "content-type": "application/json" },
          body: JSON.stringify(CONTENT_BODY),
          signal: controller.signal,
        }).catch((err: unknown) => err);
        const before = sim.received.length;
        await waitUntil(() => sim.received.length > before);
        controller.abort();
        await call;
      }
      held = null;
      release();
      await gw.gateway.ctx.health.flush();
      expect(await statusOf(id)).toBe("enabled");
      expect((await gw.gateway.ctx.channels.get(id))?.failureCount).toBe(0);
    });

    it("a failure reported while the gateway stops does not count", async () => {
      const ctx = gw.gateway.ctx;
      const id = await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: [MODEL], groups: ["stopping"] });
      const health = new ChannelHealth(
        ctx.channels,
        async () => {},
        { afterFailures: 1, minUsers: 1, windowMs: 60_000 },
        ctx.logger,
      );
      await health.stop();
      await health.report(
        { id, name: "c" },
        new UpstreamError("retryable", "upstream call timed out or was aborted"),
        "user:1",
      );
      expect(await statusOf(id)).toBe("enabled");
      expect((await ctx.channels.get(id))?.failureCount).toBe(0);
    });

    it("failures of the channel itself for several users still disable it", async () => {
      const group = "broken";
      const id = await gw.createChannel({
        type: "gemini",
        baseUrl: sim.url,
        models: [MODEL],
        groups: [group],
      });
      const users = await Promise.all([1, 2].map(() => gw.createUser({ quota: 50_000_000, group })));
      for (const u of users) {
        const res = await callGateway(gw.url, "POST", PATH, {
          headers: googleKey(u.key),
          body: { contents: [{ role: "user", parts: [{ text: "[503]" }] }] },
        });
        expect(res.status).toBe(503);
      }
      await waitUntil(async () => (await statusOf(id)) === "auto_disabled");
    });
  });
}

async function waitUntil(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("condition not met in 2 s");
}
