import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ALL_IMAGE_MODELS, generate, type ImageEnv, postImages, startImageEnv } from "./harness.js";

const QUOTA_PER_UNIT = 500_000;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`image billing [${kind}]`, () => {
    let env: ImageEnv;
    beforeAll(async () => {
      env = await startImageEnv(kind);
    });
    afterAll(async () => {
      await env?.close();
    });

    async function ledgerOf(userId: number) {
      const rows = await env.gw.gateway.ctx.store.db
        .selectFrom("ledger")
        .select(["kind", "amount", "reference"])
        .where("user_id", "=", userId)
        .where("kind", "!=", "topup")
        .orderBy("id")
        .execute();
      return rows.map((r) => ({ kind: r.kind, amount: Number(r.amount), reference: r.reference }));
    }

    it("charges each model its own price per image", async () => {
      const charged: Record<string, number> = {};
      for (const model of ALL_IMAGE_MODELS) {
        const user = await env.gw.createUser({ quota: 10_000_000 });
        await generate(env.client(user.key), { model, prompt: "priced" });
        charged[model] = 10_000_000 - (await env.gw.balance(user.userId));
        const price = await env.gw.gateway.ctx.prices.imagePrice(model);
        expect(charged[model]).toBe(Math.ceil((price ?? 0) * QUOTA_PER_UNIT));
      }
      expect(charged["image-model-pro-4k"]).toBeGreaterThan(charged["image-model-pro-1k"] ?? 0);
      expect(charged["image-model-2-4k"]).toBeGreaterThan(charged["image-model-2-0.5k"] ?? 0);
    });

    it("charges price x n x group ratio x channel ratio", async () => {
      await env.gw.gateway.ctx.prices.setGroupRatio("vip", 0.5);
      await env.gw.gateway.ctx.channels.create({
        name: "vip-gemini",
        type: "gemini",
        baseUrl: env.sim.url,
        key: "k",
        models: ["image-model-2-1k"],
        groups: ["vip"],
        priceRatio: 3,
      });
      const user = await env.gw.createUser({ quota: 10_000_000, group: "vip" });
      await env.client(user.key).images.generate({ model: "image-model-2-1k", prompt: "two", n: 2 });
      const price = (await env.gw.gateway.ctx.prices.imagePrice("image-model-2-1k")) ?? 0;
      const expected = 2 * Math.ceil(price * QUOTA_PER_UNIT * 0.5 * 3);
      expect(10_000_000 - (await env.gw.balance(user.userId))).toBe(expected);
      const rows = await ledgerOf(user.userId);
      // The sale: its charge and the settle row that closes it (nothing given back).
      expect(rows).toHaveLength(2);
      expect(rows.find((r) => r.kind === "charge")).toMatchObject({ amount: -expected });
      expect(rows.find((r) => r.kind === "settle")).toMatchObject({ amount: 0 });
      expect(new Set(rows.map((r) => r.reference)).size).toBe(1);
      expect(rows[0]?.reference).toMatch(/^image:/);
    });

    for (const [marker, status] of [
      ["[noimage]", 502],
      ["[blocked]", 400],
      ["[imagesafety]", 400],
      ["[error400]", 400],
    ] as const) {
      it(`refunds the charge exactly once when the upstream answers ${marker}`, async () => {
        const user = await env.gw.createUser({ quota: 1_000_000 });
        const res = await postImages(env.gw, user.key, {
          model: "image-model-pro-2k",
          prompt: `a dog ${marker}`,
          n: 2,
        });
        expect(res.status).toBe(status);
        expect(res.body.error.message).toContain("refunded");
        expect(await env.gw.balance(user.userId)).toBe(1_000_000);
        const rows = await ledgerOf(user.userId);
        expect(rows.map((r) => r.kind)).toEqual(["charge", "refund"]);
        expect(rows[0]?.reference).toBe(rows[1]?.reference);
        expect(rows[1]?.amount).toBe(-(rows[0]?.amount ?? 0));
        expect(await env.gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(1_000_000);
      });
    }

    it("says a safety block was a safety block", async () => {
      const user = await env.gw.createUser();
      const res = await postImages(env.gw, user.key, { model: "image-model", prompt: "[blocked] something" });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain("safety");
      expect(res.body.error.param).toBe("prompt");
    });

    it("settles to the images delivered when fewer than n come back", async () => {
      const user = await env.gw.createUser({ quota: 10_000_000, group: "oai" });
      const answer = await env.client(user.key).images.generate({ model: "image-model", prompt: "[fewer] cats", n: 3 });
      expect(answer.data).toHaveLength(2);
      const perImage = Math.ceil(((await env.gw.gateway.ctx.prices.imagePrice("image-model")) ?? 0) * QUOTA_PER_UNIT);
      expect(10_000_000 - (await env.gw.balance(user.userId))).toBe(2 * perImage);
      const rows = await ledgerOf(user.userId);
      expect(rows.map((r) => [r.kind, r.amount])).toEqual([
        ["charge", -3 * perImage],
        ["settle", perImage],
      ]);
      expect(await env.gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(await env.gw.balance(user.userId));
    });

    it("refunds an openai-images answer that holds no image", async () => {
      const user = await env.gw.createUser({ quota: 1_000_000, group: "oai" });
      const res = await postImages(env.gw, user.key, { model: "image-model", prompt: "[empty]" });
      expect(res.status).toBe(502);
      expect(await env.gw.balance(user.userId)).toBe(1_000_000);
    });

    it("refuses a request the balance cannot cover without calling the upstream", async () => {
      const user = await env.gw.createUser({ quota: 10 });
      const calls = env.sim.received.length;
      const res = await postImages(env.gw, user.key, { model: "image-model-pro-4k", prompt: "costly" });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("insufficient_quota");
      expect(env.sim.received.length).toBe(calls);
      expect(await env.gw.balance(user.userId)).toBe(10);
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`image failover [${kind}]`, () => {
    let env: ImageEnv;
    let failing: Simulator;
    beforeAll(async () => {
      env = await startImageEnv(kind);
      failing = await startSimulator({ gemini: { image: { outcome: "error-500" } } });
      await env.gw.createChannel({
        type: "gemini",
        baseUrl: failing.url,
        models: ["image-model"],
        groups: ["failover"],
        priority: 10,
      });
    });
    afterAll(async () => {
      await failing?.close();
      await env?.close();
    });

    it("moves to the next channel after a retryable failure and charges once", async () => {
      await env.gw.createChannel({
        type: "gemini",
        baseUrl: env.sim.url,
        models: ["image-model"],
        groups: ["failover"],
      });
      const user = await env.gw.createUser({ quota: 1_000_000, group: "failover" });
      const answer = await generate(env.client(user.key), { model: "image-model", prompt: "resilient" });
      expect(answer.data).toHaveLength(1);
      expect(failing.received.length).toBe(1);
      const spent = 1_000_000 - (await env.gw.balance(user.userId));
      expect(spent).toBe(Math.ceil(0.039 * QUOTA_PER_UNIT));
    });

    it("refunds when every channel fails, with a 502", async () => {
      const onlyFailing = await env.gw.createChannel({
        type: "gemini",
        baseUrl: failing.url,
        models: ["image-model-pro-1k"],
        groups: ["failover"],
      });
      expect(onlyFailing).toBeGreaterThan(0);
      const user = await env.gw.createUser({ quota: 1_000_000, group: "failover" });
      const res = await postImages(env.gw, user.key, { model: "image-model-pro-1k", prompt: "doomed" });
      expect(res.status).toBe(502);
      expect(res.body.error.type).toBe("server_error");
      expect(res.body.error.message).not.toContain("sim-key");
      expect(await env.gw.balance(user.userId)).toBe(1_000_000);
    });

    it("answers 503 when the model has channels but none for the caller's group", async () => {
      const user = await env.gw.createUser({ group: "nobody" });
      const res = await postImages(env.gw, user.key, { model: "image-model", prompt: "x" });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("no_channel_available");
    });
  });
}
