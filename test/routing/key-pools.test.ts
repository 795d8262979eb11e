import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { ChannelKeys } from "../../src/store/channel-keys.js";
import { Channels } from "../../src/store/channels.js";
import { KeyProber } from "../../src/workers/key-prober.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

const MODEL = "gemini-2.5-flash";
const LONE_MODEL = "gemini-2.5-pro";
const GOOD = ["sim-pool-key-aaaaaaaaaaaa-0001", "sim-pool-key-bbbbbbbbbbbb-0002"];
const BAD = "sim-pool-key-revoked-cccccc-0003";
const DEAD = ["sim-pool-key-dead-dddddddddd-0004", "sim-pool-key-dead-eeeeeeeeee-0005"];
const EVERY_KEY = [...GOOD, BAD, ...DEAD];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`key pools [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    /** The keys the simulator accepts; changed by the tests (the simulator reads it on each call). */
    const accepted = [...GOOD];
    let pooled = 0;
    let lone = 0;
    let user: { key: string; userId: number };
    let neighbour: { key: string; userId: number };

    beforeAll(async () => {
      sim = await startSimulator({ keys: accepted, gemini: { text: {} } });
      gw = await startTestGateway(kind, { routing: { maxAttempts: 3, disableMinUsers: 2 } });
      user = await gw.createUser({ quota: 50_000_000 });
      neighbour = await gw.createUser({ quota: 50_000_000 });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    const generate = (model: string, caller = user) =>
      fetch(`${gw.url}/v1beta/models/${model}:generateContent`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": caller.key },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
      });
    const keysOf = async (id: number) => {
      await gw.gateway.ctx.keyPools.flush();
      const res = await gw.admin("GET", `/channels/${id}/keys`);
      expect(res.status).toBe(200);
      return res.body.data as { id: number; key: string; state: string; calls: number; dead_reason: string | null }[];
    };

    it("creates a channel with a pool, imports keys in bulk, and shows them masked only", async () => {
      const created = await gw.admin("POST", "/channels", {
        name: "pooled",
        type: "gemini",
        base_url: sim.url,
        key: GOOD[0],
        models: [MODEL],
        tags: ["pool", "gemini"],
      });
      expect(created.status).toBe(200);
      pooled = created.body.data.id;
      expect(created.body.data.key_rotation).toBe("round_robin");
      expect(created.body.data.tags).toEqual(["pool", "gemini"]);
      const imported = await gw.admin("POST", `/channels/${pooled}/keys`, {
        text: `# pool import\n${GOOD[1]}\n\n  ${BAD}  \n${GOOD[0]}\n`,
      });
      expect(imported.status).toBe(200);
      expect(imported.body.data.added).toHaveLength(2);
      expect(imported.body.data.duplicates).toBe(1);
      const keys = await keysOf(pooled);
      expect(keys.map((k) => k.key)).toEqual(["****0001", "****0002", "****0003"]);
      expect(keys.every((k) => k.state === "live")).toBe(true);
      const everything = JSON.stringify([created.body, imported.body, keys, (await gw.admin("GET", "/channels")).body]);
      for (const key of EVERY_KEY) expect(everything).not.toContain(key);

      const empty = await gw.admin("POST", `/channels/${pooled}/keys`, { text: "\n# nothing\n" });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toContain("text");
    });

    it("spreads calls over the keys, marks a refused key dead and keeps answering on the others", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push((await generate(MODEL)).status);
      expect(statuses).toEqual(Array(9).fill(200));
      const keys = await keysOf(pooled);
      const [first, second, bad] = keys;
      expect(bad?.state).toBe("dead");
      // Gemini answers a key it does not know with a 400 that says so; the adapter reads it as a refused key.
      expect(bad?.dead_reason).toMatch(/^key refused \(HTTP 4\d\d\): .*API key not valid/);
      expect(bad?.calls).toBe(1);
      // Round robin over three keys, then two: each good key takes a fair share of nine calls.
      expect(first?.calls).toBeGreaterThanOrEqual(3);
      expect(second?.calls).toBeGreaterThanOrEqual(3);
      expect((first?.calls ?? 0) + (second?.calls ?? 0)).toBe(9);
      const channel = (await gw.admin("GET", `/channels/${pooled}`)).body.data;
      expect(channel.status).toBe("enabled");

      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).toMatch(
        new RegExp(`gateway_upstream_key_calls_total\\{channel="${pooled}",key="${bad?.id}",outcome="auth"\\} 1`),
      );
      for (const key of EVERY_KEY) expect(metrics).not.toContain(key);
    });

    it("leaves the last live key to channel health, and revives a dead key by its probe", async () => {
      const created = await gw.admin("POST", "/channels", {
        name: "all-dead",
        type: "gemini",
        base_url: sim.url,
        key: DEAD[0],
        keys: [DEAD[1]],
        models: [LONE_MODEL],
      });
      expect(created.status).toBe(200);
      lone = created.body.data.id;
      // The first key dies; the second, the last live one, is the channel's: one user alone
      // cannot switch the channel off, a second user's refusal does.
      const res = await generate(LONE_MODEL);
      expect(res.status).toBe(503);
      const body = await res.text();
      for (const key of EVERY_KEY) expect(body).not.toContain(key);
      const keys = await keysOf(lone);
      expect(keys.map((k) => k.state)).toEqual(["dead", "live"]);
      expect((await gw.admin("GET", `/channels/${lone}`)).body.data.status).toBe("enabled");
      expect((await generate(LONE_MODEL, neighbour)).status).toBe(503);
      await gw.gateway.ctx.health.flush();
      await expect
        .poll(async () => (await gw.admin("GET", `/channels/${lone}`)).body.data.status)
        .toBe("auto_disabled");

      // The upstream takes the first key again; its probe is due a minute after it died.
      accepted.push(DEAD[0] as string);
      let now = Date.now();
      const store = new Channels(gw.gateway.ctx.store.db);
      const clocked = new ChannelKeys(gw.gateway.ctx.store.db, () => now);
      const prober = new KeyProber(
        clocked,
        store,
        gw.gateway.ctx.vendors,
        () => gw.gateway.ctx.announce("channels"),
        1000,
        gw.gateway.ctx.logger,
      );
      expect(await prober.runOnce()).toEqual([]);
      now += 61_000;
      expect(await prober.runOnce()).toEqual([keys[0]?.id]);
      const after = await keysOf(lone);
      expect(after.map((k) => k.state)).toEqual(["live", "live"]);
      expect((await gw.admin("GET", `/channels/${lone}`)).body.data.status).toBe("enabled");
      expect((await generate(LONE_MODEL)).status).toBe(200);
    });

    it("never writes a key in the logs", () => {
      const logs = gw.logs.join("\n");
      expect(logs).toContain("channel key marked dead");
      for (const key of EVERY_KEY) expect(logs).not.toContain(key);
    });

    it("disables, enables and edits the channels of a tag at once", async () => {
      const other = await gw.admin("POST", "/channels", {
        name: "tagged-too",
        type: "gemini",
        base_url: sim.url,
        key: GOOD[1],
        models: [MODEL],
        tags: ["pool"],
      });
      expect(other.status).toBe(200);
      const tags = await gw.admin("GET", "/channel-tags");
      expect(tags.body.data).toEqual([
        { tag: "gemini", channels: 1 },
        { tag: "pool", channels: 2 },
      ]);
      const off = await gw.admin("PATCH", "/channel-tags/pool", { status: "disabled", weight: 7 });
      expect(off.status).toBe(200);
      expect(off.body.data.map((c: { id: number }) => c.id).sort()).toEqual([pooled, other.body.data.id].sort());
      for (const c of off.body.data) {
        expect(c.status).toBe("disabled");
        expect(c.weight).toBe(7);
      }
      expect((await generate(MODEL)).status).toBe(503);
      const on = await gw.admin("PATCH", "/channel-tags/pool", { status: "enabled", models: [MODEL, "gemini-x"] });
      expect(
        on.body.data.every(
          (c: { status: string; models: string[] }) => c.status === "enabled" && c.models.length === 2,
        ),
      ).toBe(true);
      expect((await generate(MODEL)).status).toBe(200);
      const unknown = await gw.admin("PATCH", "/channel-tags/nope", { status: "enabled" });
      expect(unknown.status).toBe(404);
      const bad = await gw.admin("PATCH", "/channel-tags/pool", { weight: -1 });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain("weight");
    });

    it("disables and removes keys, never the last one", async () => {
      const keys = await keysOf(lone);
      const disabled = await gw.admin("PATCH", `/channels/${lone}/keys/${keys[0]?.id}`, { enabled: false });
      expect(disabled.body.data.state).toBe("disabled");
      expect((await gw.admin("DELETE", `/channels/${lone}/keys/${keys[0]?.id}`)).status).toBe(200);
      const last = await gw.admin("DELETE", `/channels/${lone}/keys/${keys[1]?.id}`);
      expect(last.status).toBe(400);
      expect((await gw.admin("DELETE", `/channels/${lone}/keys/999999`)).status).toBe(404);
      expect((await keysOf(lone)).map((k) => k.state)).toEqual(["live"]);
    });
  });
}
