import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelProbe } from "../../src/routing/channel-probe.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { refusedPort } from "../support/refused-port.js";

const MODEL = "gemini-2.5-flash";
const KEY = "sim-key-failover";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`failover across channels [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let hanging: http.Server;
    let hangingHealthy = false;
    const ids = { refusing: 0, hanging: 0, healthy: 0 };

    beforeAll(async () => {
      sim = await startSimulator({ keys: [KEY], gemini: { text: {} } });
      // Accepts connections and never answers generate calls (until told to recover).
      hanging = http.createServer((_req, res) => {
        if (hangingHealthy) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end("{}");
        }
      });
      await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
      gw = await startTestGateway(kind, { routing: { maxAttempts: 3, disableAfterFailures: 3 } });
      const base = { type: "gemini" as const, key: KEY, models: [MODEL], priority: 10 };
      ids.refusing = await gw.createChannel({
        ...base,
        name: "refusing",
        baseUrl: `http://127.0.0.1:${await refusedPort()}`,
      });
      ids.hanging = await gw.createChannel({
        ...base,
        name: "hanging",
        baseUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
        settings: { firstByteTimeoutMs: 300, timeoutMs: 2000 },
      });
      ids.healthy = await gw.createChannel({ ...base, name: "healthy", baseUrl: sim.url, priority: 0 });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      hanging?.closeAllConnections();
      await new Promise((r) => hanging?.close(r));
    });

    const channel = async (id: number) => (await gw.admin("GET", `/channels/${id}`)).body.data;

    it("answers every request through the healthy channel, charges each once, and disables the broken ones", async () => {
      // Three users: a channel is disabled only when it fails for several users.
      const users = [
        await gw.createUser({ quota: 50_000_000 }),
        await gw.createUser({ quota: 50_000_000 }),
        await gw.createUser({ quota: 50_000_000 }),
      ];
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const key = (users[i % 3] as { key: string }).key;
        const res = await fetch(`${gw.url}/v1beta/models/${MODEL}:generateContent`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-goog-api-key": key },
          body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: `hello ${i}` }] }] }),
        });
        statuses.push(res.status);
        const body = (await res.json()) as { candidates?: { content?: { parts?: { text?: string }[] } }[] };
        expect(body.candidates?.[0]?.content?.parts?.[0]?.text, JSON.stringify(body)).toBeTruthy();
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);

      // One charge and one settlement per request, never more.
      const rows = (
        await Promise.all(users.map((u) => gw.gateway.ctx.ledger.entries(u.userId, { limit: 100 })))
      ).flat();
      const byRef = new Map<string, string[]>();
      for (const r of rows.filter((r) => r.reference.startsWith("content:"))) {
        byRef.set(r.reference, [...(byRef.get(r.reference) ?? []), r.kind].sort());
      }
      expect(byRef.size).toBe(6);
      for (const kinds of byRef.values()) expect(kinds).toEqual(["charge", "settle"]);
      for (const u of users) expect(await gw.gateway.ctx.ledger.ledgerSum(u.userId)).toBe(await gw.balance(u.userId));

      const refusing = await channel(ids.refusing);
      const hung = await channel(ids.hanging);
      expect(refusing.status).toBe("auto_disabled");
      expect(refusing.status_reason).toMatch(/failures for 3 users.*unreachable/);
      expect(hung.status).toBe("auto_disabled");
      expect(hung.status_reason).toMatch(/failures for 3 users.*timed out/);
      expect((await channel(ids.healthy)).status).toBe("enabled");
      // Healthy calls all went to the simulator.
      expect(sim.received.filter((r) => r.protocol === "gemini")).toHaveLength(6);
    });

    it("brings a channel back once its probe succeeds", async () => {
      const ctx = gw.gateway.ctx;
      const probe = new ChannelProbe(ctx.channels, ctx.vendors, () => ctx.announce("channels"), 60_000, ctx.logger);
      expect(await probe.runOnce()).toEqual([]);
      hangingHealthy = true;
      expect(await probe.runOnce()).toEqual([ids.hanging]);
      expect((await channel(ids.hanging)).status).toBe("enabled");
      expect((await channel(ids.refusing)).status).toBe("auto_disabled");
    });
  });
}
