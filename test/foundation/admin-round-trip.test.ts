import { Value } from "@sinclair/typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PriceView, TokenView, UserView } from "../../src/contracts/admin.js";
import { channelView, priceView, tokenView, userView } from "../../src/core/admin/views.js";
import { ChannelView } from "../../src/wiring/admin-ports.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

const CHANNEL_KEY = "round-trip-channel-key-5f1d0c";

/** A GET body without the field that a write moves on by itself. */
const stable = (view: Record<string, unknown>) => {
  const { updated_at: _updated, ...rest } = view;
  return rest;
};

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`admin API naming and round trips [${kind}]`, () => {
    let gw: TestGateway;
    /** Every answer of the admin API in this file, to look for the channel key in. */
    const answers: unknown[] = [];
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await gw.admin(method, path, body);
      answers.push(res.body);
      return res;
    };

    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    /** GET, then PATCH (or PUT) with exactly that body: 200 and the same resource. */
    async function roundTrip(path: string, schema: Parameters<typeof Value.Check>[0], method = "PATCH") {
      const before = await admin("GET", path);
      expect(before.status, JSON.stringify(before.body)).toBe(200);
      expect(Value.Check(schema, before.body.data), JSON.stringify([...Value.Errors(schema, before.body.data)])).toBe(
        true,
      );
      const after = await admin(method, path, before.body.data);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(stable(after.body.data)).toEqual(stable(before.body.data));
      const again = await admin("GET", path);
      expect(stable(again.body.data)).toEqual(stable(before.body.data));
      return before.body.data;
    }

    it("sends a user's GET body back through PATCH unchanged", async () => {
      const { userId } = await gw.createUser({ quota: 1234, group: "gold" });
      expect((await admin("PUT", `/users/${userId}/webhook`, { url: "https://93.184.216.34/hook" })).status).toBe(200);
      const user = await roundTrip(`/users/${userId}`, UserView);
      expect(user).toMatchObject({ quota: 1234, group: "gold", webhook_url: "https://93.184.216.34/hook" });
    });

    it("sends a token's GET body back through PATCH unchanged", async () => {
      const { tokenId } = await gw.createUser({
        token: { quotaLimit: 500, models: ["gemini-2.5-flash"], ipAllow: ["10.0.0.0/8"], expiresAt: 4_000_000_000 },
      });
      const token = await roundTrip(`/tokens/${tokenId}`, TokenView);
      expect(token).toMatchObject({ quota_limit: 500, models: ["gemini-2.5-flash"], ip_allow: ["10.0.0.0/8"] });
    });

    it("answers channels in snake_case and takes their GET body back through PATCH unchanged", async () => {
      const id = await gw.createChannel({
        type: "gemini",
        baseUrl: "http://127.0.0.1:9",
        key: CHANNEL_KEY,
        models: ["m-rt"],
        modelMapping: { "m-rt": "upstream-m" },
        priceRatio: 1.5,
        settings: { timeoutMs: 5000, firstByteTimeoutMs: 700 },
      });
      const channel = await roundTrip(`/channels/${id}`, ChannelView);
      expect(channel).toMatchObject({
        base_url: "http://127.0.0.1:9",
        price_ratio: 1.5,
        model_mapping: { "m-rt": "upstream-m" },
        settings: { timeout_ms: 5000, first_byte_timeout_ms: 700 },
        status_reason: "",
        failure_count: 0,
      });
      expect(Object.keys(channel).filter((k) => /[A-Z]/.test(k))).toEqual([]);
      // The settings reach the store in the form the upstream adapters read.
      expect((await gw.gateway.ctx.channels.get(id))?.settings).toEqual({ timeoutMs: 5000, firstByteTimeoutMs: 700 });
    });

    it("sends a price's GET body back through PATCH unchanged, and a group ratio's through PUT", async () => {
      await admin("PUT", "/prices", { kind: "content", name: "m-rt", input_per_million: 0.3, output_per_million: 2 });
      const price = await roundTrip("/prices/content/m-rt", PriceView);
      expect(price).toMatchObject({ input_per_million: 0.3, output_per_million: 2, cached_ratio: 1 });
      await admin("PUT", "/group-ratios/gold", { ratio: 0.75 });
      const ratios = await admin("GET", "/group-ratios");
      const gold = ratios.body.data.find((r: { group: string }) => r.group === "gold");
      const put = await admin("PUT", "/group-ratios/gold", gold);
      expect(put.status).toBe(200);
      expect(put.body.data).toEqual({ group: "gold", ratio: 0.75 });
    });

    it("builds views with exactly the fields of their schemas, so no field is dropped from an answer unseen", async () => {
      // An answer is serialised by its schema, which leaves out any field the schema lacks.
      const { userId, tokenId } = await gw.createUser();
      const channelId = await gw.createChannel({ type: "gemini", baseUrl: "http://127.0.0.1:9", models: ["m-v"] });
      const ctx = gw.gateway.ctx;
      const views: [string, Parameters<typeof Value.Check>[0], unknown][] = [
        ["user", UserView, userView((await ctx.users.get(userId)) as never)],
        ["token", TokenView, tokenView((await ctx.tokens.get(tokenId)) as never)],
        ["channel", ChannelView, channelView((await ctx.channels.get(channelId)) as never)],
        ["price", PriceView, priceView((await ctx.prices.getPrice("image", "image-model")) as never)],
      ];
      for (const [name, schema, view] of views) {
        expect(Value.Check(schema, view), `${name}: ${JSON.stringify([...Value.Errors(schema, view)][0])}`).toBe(true);
        expect(Object.keys(view as object).sort(), name).toEqual(Object.keys(schema.properties).sort());
      }
    });

    it("ignores read-only fields in a PATCH and applies the writable ones", async () => {
      const { userId } = await gw.createUser({ quota: 50 });
      const res = await admin("PATCH", `/users/${userId}`, { name: "renamed", quota: 999_999, used_quota: 5 });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ name: "renamed", quota: 50, used_quota: 0 });
      expect(await gw.balance(userId)).toBe(50);
      expect(await gw.gateway.ctx.ledger.ledgerSum(userId)).toBe(50);
    });

    it("refuses a body whose identity is another resource's, naming the field", async () => {
      const a = await gw.createUser();
      const b = await gw.createUser();
      const bodyOfA = (await admin("GET", `/users/${a.userId}`)).body.data;
      const res = await admin("PATCH", `/users/${b.userId}`, { ...bodyOfA, name: "overwritten" });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "invalid_request", data: null });
      expect(res.body.message).toMatch(/body\.id/);
      expect((await admin("GET", `/users/${b.userId}`)).body.data.name).not.toBe("overwritten");
      const price = await admin("PATCH", "/prices/image/image-model", { kind: "content", price: 3 });
      expect(price.status).toBe(400);
      expect(price.body.message).toMatch(/body\.kind/);
    });

    it("names the values a field may take when a body gives another one", async () => {
      const res = await admin("POST", "/channels", {
        name: "unknown type",
        type: "no-such-vendor",
        base_url: "http://127.0.0.1:9",
        key: "sk-unknown-type",
        models: ["m-unknown"],
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "invalid_request", data: null });
      // Every type of the vendor registry, as GET /channel-types lists them.
      const types = (await admin("GET", "/channel-types")).body.data.map((t: { type: string }) => t.type);
      expect(types.length).toBeGreaterThan(1);
      expect(res.body.message).toBe(`body.type must be one of ${types.join(", ")}`);
    });

    it("keeps auto_disabled to the gateway: sent back unchanged it is ignored, asked for it is refused", async () => {
      const id = await gw.createChannel({ type: "gemini", baseUrl: "http://127.0.0.1:9", models: ["m-auto"] });
      const refused = await admin("PATCH", `/channels/${id}`, { status: "auto_disabled" });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/body\.status/);
      await gw.gateway.ctx.channels.update(id, { status: "auto_disabled", statusReason: "3 consecutive failures" });
      const body = (await admin("GET", `/channels/${id}`)).body.data;
      const sentBack = await admin("PATCH", `/channels/${id}`, { ...body, weight: 4 });
      expect(sentBack.status).toBe(200);
      expect(sentBack.body.data).toMatchObject({ status: "auto_disabled", weight: 4 });
    });

    it("deletes a channel unless an unfinished task is bound to it", async () => {
      const id = await gw.createChannel({ type: "gemini", baseUrl: "http://127.0.0.1:9", models: ["m-del"] });
      const busy = await gw.createChannel({ type: "task-relay", baseUrl: "http://127.0.0.1:9", models: ["audioa"] });
      const { userId } = await gw.createUser();
      const now = Math.floor(Date.now() / 1000);
      await gw.gateway.ctx.store.db
        .insertInto("tasks")
        .values({
          task_id: "task_roundtripbusychannel0000000000",
          platform: "audioa",
          user_id: userId,
          token_id: null,
          channel_id: busy,
          group: "default",
          action: "MUSIC",
          status: "IN_PROGRESS",
          quota: 0,
          fail_reason: "",
          progress: "10%",
          submit_time: now,
          start_time: now,
          finish_time: 0,
          properties: "{}",
          data: "{}",
          request_body: "{}",
          upstream_id: "u1",
          next_poll_at: Date.now(),
          created_at: now,
          updated_at: now,
        } as never)
        .execute();
      const refused = await admin("DELETE", `/channels/${busy}`);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/1 unfinished task/);
      expect((await admin("GET", `/channels/${busy}`)).status).toBe(200);

      expect(await admin("DELETE", `/channels/${id}`)).toMatchObject({
        status: 200,
        body: { data: { id, deleted: true } },
      });
      expect((await admin("GET", `/channels/${id}`)).status).toBe(404);
      expect((await admin("DELETE", `/channels/${id}`)).status).toBe(404);
    });

    it("deletes a user by revoking its tokens and keeping its record", async () => {
      const { userId, key } = await gw.createUser({ quota: 70 });
      const deleted = await admin("DELETE", `/users/${userId}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.data).toMatchObject({ id: userId, status: "deleted", quota: 70 });
      const tokens = await admin("GET", `/users/${userId}/tokens`);
      expect(tokens.body.data.map((t: { status: string }) => t.status)).toEqual(["revoked"]);
      const patch = await admin("PATCH", `/users/${userId}`, deleted.body.data);
      expect(patch.status).toBe(409);
      const call = await fetch(`${gw.url}/audioa/fetch`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ ids: ["task_x"] }),
      });
      expect(call.status).toBe(401);
    });

    it("shows, changes and deletes one price", async () => {
      await admin("PUT", "/prices", { kind: "image", name: "img-rt", price: 0.2 });
      const patched = await admin("PATCH", "/prices/image/img-rt", { price: 0.4 });
      expect(patched.body.data).toMatchObject({ kind: "image", name: "img-rt", price: 0.4 });
      expect(await gw.gateway.ctx.prices.imagePrice("img-rt")).toBe(0.4);
      expect((await admin("DELETE", "/prices/image/img-rt")).body.data).toEqual({
        kind: "image",
        name: "img-rt",
        deleted: true,
      });
      expect(await gw.gateway.ctx.prices.imagePrice("img-rt")).toBeNull();
      expect((await admin("GET", "/prices/image/img-rt")).status).toBe(404);
      expect((await admin("PATCH", "/prices/image/img-rt", { price: 1 })).status).toBe(404);
    });

    it("never shows a channel's key in any answer", async () => {
      // Runs last: every answer of this file was collected.
      const id = await gw.createChannel({ type: "gemini", baseUrl: "http://127.0.0.1:9", models: ["m-key"] });
      await admin("PATCH", `/channels/${id}`, { key: CHANNEL_KEY });
      await admin("GET", "/channels");
      expect(answers.length).toBeGreaterThan(20);
      for (const body of answers) expect(JSON.stringify(body)).not.toContain(CHANNEL_KEY);
      expect((await gw.gateway.ctx.channels.get(id))?.key).toBe(CHANNEL_KEY);
    });
  });
}
