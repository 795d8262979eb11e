import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/core/upstream-error.js";
import { ChannelProbe } from "../../src/routing/channel-probe.js";
import { ChannelSlots } from "../../src/routing/channel-slots.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`channel health [${kind}]`, () => {
    let gw: TestGateway;
    let upstream: http.Server;
    let upstreamUrl: string;
    beforeAll(async () => {
      gw = await startTestGateway(kind, { routing: { disableAfterFailures: 3, disableMinUsers: 2 } });
      upstream = http.createServer((req, res) => {
        res.writeHead(req.headers["x-goog-api-key"] === "good-key" ? 200 : 401, { "content-type": "application/json" });
        res.end("{}");
      });
      await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await gw?.close();
      await new Promise((r) => upstream?.close(r));
    });

    const channel = async (id: number) => (await gw.admin("GET", `/channels/${id}`)).body.data;

    it("disables a channel once the upstream refuses its key for two users, with the reason", async () => {
      const id = await gw.createChannel({ type: "gemini", baseUrl: upstreamUrl, key: "bad-key", models: ["m1"] });
      const refused = new UpstreamError("auth", "upstream error 401: bad key", { status: 401 });
      await gw.gateway.ctx.health.report({ id, name: "c" }, refused, "user:1");
      await gw.gateway.ctx.health.report({ id, name: "c" }, refused, "user:1");
      expect((await channel(id)).status).toBe("enabled");
      await gw.gateway.ctx.health.report({ id, name: "c" }, refused, "user:2");
      const c = await channel(id);
      expect(c.status).toBe("auto_disabled");
      expect(c.status_reason).toContain("credentials");
      expect(await gw.gateway.ctx.channels.candidates("m1", "default")).toEqual([]);
    });

    it("disables after retryable failures for two users within the window and shows the last error and success rate", async () => {
      const id = await gw.createChannel({ type: "gemini", baseUrl: upstreamUrl, key: "good-key", models: ["m2"] });
      const health = gw.gateway.ctx.health;
      await health.report({ id, name: "c" }, null, "user:1");
      await health.report(
        { id, name: "c" },
        new UpstreamError("retryable", "upstream unreachable (ECONNREFUSED)"),
        "user:1",
      );
      await health.report(
        { id, name: "c" },
        new UpstreamError("retryable", "upstream unreachable (ECONNREFUSED)"),
        "user:2",
      );
      expect((await channel(id)).status).toBe("enabled");
      // A request the upstream refuses is the request's fault: it does not count against the channel.
      await health.report(
        { id, name: "c" },
        new UpstreamError("refused", "upstream error 400: bad prompt", { status: 400 }),
        "user:1",
      );
      for (let i = 0; i < 3; i++) {
        await health.report(
          { id, name: "c" },
          new UpstreamError("retryable", "upstream timed out before answering"),
          `user:${i}`,
        );
      }
      const c = await channel(id);
      expect(c.status).toBe("auto_disabled");
      expect(c.status_reason).toMatch(/3 failures for 3 users within 60 s/);
      expect(c.last_error).toContain("timed out");
      expect(c.recent_success_rate).toBeLessThan(1);
      expect(c.request_count).toBe(7);
    });

    it("re-enables a recovered channel on the probe and leaves an unreachable one disabled", async () => {
      const ctx = gw.gateway.ctx;
      const healthy = await gw.createChannel({ type: "gemini", baseUrl: upstreamUrl, key: "good-key", models: ["m3"] });
      const dead = await gw.createChannel({
        type: "gemini",
        baseUrl: "http://127.0.0.1:9",
        key: "good-key",
        models: ["m3"],
      });
      for (const id of [healthy, dead]) {
        for (const user of ["user:1", "user:2"]) {
          await ctx.health.report(
            { id, name: "c" },
            new UpstreamError("auth", "upstream error 403", { status: 403 }),
            user,
          );
        }
      }
      const probe = new ChannelProbe(ctx.channels, ctx.vendors, () => ctx.announce("channels"), 60_000, ctx.logger);
      const revived = await probe.runOnce();
      expect(revived).toContain(healthy);
      expect(revived).not.toContain(dead);
      expect((await channel(healthy)).status).toBe("enabled");
      expect((await channel(dead)).status).toBe("auto_disabled");
      expect((await ctx.channels.candidates("m3", "default")).map((c) => c.id)).toEqual([healthy]);
    });

    it("leaves a channel the operator disabled alone", async () => {
      const ctx = gw.gateway.ctx;
      const id = await gw.createChannel({ type: "gemini", baseUrl: upstreamUrl, key: "good-key", models: ["m4"] });
      await gw.admin("PATCH", `/channels/${id}`, { status: "disabled" });
      const probe = new ChannelProbe(ctx.channels, ctx.vendors, () => ctx.announce("channels"), 60_000, ctx.logger);
      expect(await probe.runOnce()).toEqual([]);
      expect((await channel(id)).status).toBe("disabled");
    });
  });
}

describe("channel concurrency slots", () => {
  it("never lets more calls than the limit run at once, and hands slots to waiters in order", async () => {
    const slots = new ChannelSlots(5_000);
    const channel = { id: 1, settings: { concurrency: 2 } };
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const release = await slots.acquire(channel);
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        order.push(i);
        running -= 1;
        release();
        release(); // a second release is ignored
      }),
    );
    expect(peak).toBe(2);
    expect(order).toHaveLength(8);
    expect(slots.inUse(1)).toBe(0);
  });

  it("counts a channel that stays full as busy, a retryable error", async () => {
    const slots = new ChannelSlots(30);
    const channel = { id: 2, settings: { concurrency: 1 } };
    const release = await slots.acquire(channel);
    const err = await slots.acquire(channel).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe("retryable");
    expect((err as UpstreamError).channelAtFault).toBe(false);
    release();
    const again = await slots.acquire(channel);
    again();
    expect(slots.inUse(2)).toBe(0);
  });
});
