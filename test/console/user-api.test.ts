import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UserImages } from "../../src/store/user-images.js";
import { type ImageEnv, postImages, startImageEnv } from "../images/harness.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ConsoleClient, createConsoleUser, TEST_PASSWORD_COST } from "./console-client.js";

const kinds: StoreKind[] = HAS_PG ? ["sqlite", "postgres"] : ["sqlite"];

/** A user's own API (/console/api/me/...) over HTTP on a real gateway with the simulator. */
describe.each(kinds)("the console's user API on %s", (kind) => {
  let env: ImageEnv;
  let alice: ConsoleClient;
  let bob: ConsoleClient;
  let aliceId: number;
  let bobId: number;
  const aliceTask = "task_consoleownedbyalice000000000000";

  beforeAll(async () => {
    env = await startImageEnv(kind, {
      console: { passwordCost: TEST_PASSWORD_COST },
      webhooks: { allowPrivateUrls: true },
    });
    aliceId = await createConsoleUser(env.gw, "alice", { email: "alice@example.com", quota: 50_000_000 });
    bobId = await createConsoleUser(env.gw, "bob", { quota: 1_000 });
    alice = new ConsoleClient(env.gw.url);
    bob = new ConsoleClient(env.gw.url);
    expect((await alice.login("alice")).status).toBe(200);
    expect((await bob.login("bob")).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    await env.gw.gateway.ctx.store.db
      .insertInto("tasks")
      .values({
        task_id: aliceTask,
        platform: "audioa",
        user_id: aliceId,
        token_id: null,
        channel_id: env.geminiChannelId,
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
        next_poll_at: Date.now() + 3_600_000,
        created_at: now,
        updated_at: now,
      } as never)
      .execute();
  });
  afterAll(async () => {
    await env?.close();
  });

  it("shows the user's own account and nothing of the hashes", async () => {
    const me = await alice.call("GET", "/console/api/me");
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: aliceId,
      name: "alice",
      email: "alice@example.com",
      quota: 50_000_000,
      used_quota: 0,
      credit_line: 0,
      status: "enabled",
      webhook_url: null,
    });
    expect(me.headers.get("cache-control")).toBe("no-store");
  });

  it("creates a token whose key is shown once, lists it without it, and revokes it", async () => {
    const created = await alice.call("POST", "/console/api/me/tokens", { name: "ci", quota_limit: 1000 });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: "ci", user_id: aliceId, quota_limit: 1000, status: "enabled" });
    expect(created.body.key).toMatch(/^sk-/);
    const list = await alice.call("GET", "/console/api/me/tokens");
    expect(list.body.map((t: { id: number }) => t.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);

    const bad = await alice.call("POST", "/console/api/me/tokens", { name: "" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("name");
    const ipAllow = await alice.call("POST", "/console/api/me/tokens", { name: "x", ip_allow: ["1.2.3.4"] });
    expect(ipAllow.status).toBe(400);

    // Bob cannot see or revoke Alice's token: it is not found for him.
    expect((await bob.call("GET", "/console/api/me/tokens")).body).toEqual([]);
    expect((await bob.call("DELETE", `/console/api/me/tokens/${created.body.id}`)).status).toBe(404);
    expect((await env.gw.gateway.ctx.tokens.get(created.body.id))?.status).toBe("enabled");

    const revoked = await alice.call("DELETE", `/console/api/me/tokens/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe("revoked");
  });

  it("shows a user's own tasks and answers 404 for another user's", async () => {
    const mine = await alice.call("GET", "/console/api/me/tasks?platform=audioa");
    expect(mine.status).toBe(200);
    expect(mine.body.map((t: { task_id: string }) => t.task_id)).toEqual([aliceTask]);
    expect((await alice.call("GET", `/console/api/me/tasks/${aliceTask}`)).body).toMatchObject({
      task_id: aliceTask,
      status: "IN_PROGRESS",
    });
    expect((await bob.call("GET", "/console/api/me/tasks")).body).toEqual([]);
    const foreign = await bob.call("GET", `/console/api/me/tasks/${aliceTask}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
  });

  it("leaves out a video its owner deleted, as the Videos API does", async () => {
    const now = Math.floor(Date.now() / 1000);
    const deletedVideo = "task_consoledeletedvideo0000000000000";
    await env.gw.gateway.ctx.store.db
      .insertInto("tasks")
      .values({
        task_id: deletedVideo,
        platform: "video",
        user_id: aliceId,
        token_id: null,
        channel_id: env.geminiChannelId,
        group: "default",
        action: "VIDEO",
        status: "SUCCESS",
        quota: 0,
        fail_reason: "",
        progress: "100%",
        submit_time: now,
        start_time: now,
        finish_time: now,
        properties: "{}",
        data: "{}",
        request_body: "{}",
        upstream_id: "v1",
        next_poll_at: 0,
        created_at: now,
        updated_at: now,
        deleted_at: now,
      } as never)
      .execute();
    const all = await alice.call("GET", "/console/api/me/tasks");
    expect(all.status).toBe(200);
    expect(all.body.map((t: { task_id: string }) => t.task_id)).toEqual([aliceTask]);
    expect((await alice.call("GET", "/console/api/me/tasks?platform=video")).body).toEqual([]);
    expect((await alice.call("GET", `/console/api/me/tasks/${deletedVideo}`)).status).toBe(404);
    // Not deleted, the same row is listed.
    await env.gw.gateway.ctx.store.db
      .updateTable("tasks")
      .set({ deleted_at: 0 })
      .where("task_id", "=", deletedVideo)
      .execute();
    expect((await alice.call("GET", `/console/api/me/tasks/${deletedVideo}`)).status).toBe(200);
    await env.gw.gateway.ctx.store.db.deleteFrom("tasks").where("task_id", "=", deletedVideo).execute();
  });

  it("shows a user's own ledger only", async () => {
    const ledger = await alice.call("GET", "/console/api/me/ledger");
    expect(ledger.status).toBe(200);
    expect(ledger.body.length).toBeGreaterThan(0);
    expect(ledger.body.every((e: { user_id: number }) => e.user_id === aliceId)).toBe(true);
    const bobs = await bob.call("GET", "/console/api/me/ledger?limit=500");
    expect(bobs.body.every((e: { user_id: number }) => e.user_id === bobId)).toBe(true);
    expect((await bob.call("GET", "/console/api/me/ledger?limit=x")).status).toBe(400);
  });

  it("sets and removes the default webhook URL and rotates its secret", async () => {
    const before = (await alice.call("GET", "/console/api/me/webhook")).body;
    expect(before.secret).toMatch(/\S{16,}/);
    const set = await alice.call("PUT", "/console/api/me/webhook", { url: "http://127.0.0.1:9/hook" });
    expect(set.status).toBe(200);
    expect(set.body.url).toBe("http://127.0.0.1:9/hook");
    const bad = await alice.call("PUT", "/console/api/me/webhook", { url: "not a url" });
    expect(bad.status).toBe(400);
    const rotated = await alice.call("POST", "/console/api/me/webhook/rotate-secret");
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(before.secret);
    expect((await alice.call("GET", "/console/api/me/webhook")).body).toEqual({
      url: "http://127.0.0.1:9/hook",
      secret: rotated.body.secret,
    });
    expect((await alice.call("PUT", "/console/api/me/webhook", { url: null })).body.url).toBeNull();
  });

  it("gives a one-hour playground token that generates images, listed in the user's images and spend", async () => {
    const issued = await alice.call("POST", "/console/api/me/playground-token");
    expect(issued.status).toBe(200);
    const now = Date.now() / 1000;
    expect(issued.body.expires_at).toBeGreaterThan(now + 3590);
    expect(issued.body.expires_at).toBeLessThanOrEqual(now + 3601);
    const tokens = (await alice.call("GET", "/console/api/me/tokens")).body;
    expect(tokens.find((t: { name: string }) => t.name === "console playground")).toBeDefined();

    const image = await postImages(env.gw, issued.body.key, { model: "image-model-2-1k", prompt: "a red circle" });
    expect(image.status).toBe(200);
    const url = image.body.data[0].url as string;
    const images = await alice.call("GET", "/console/api/me/images");
    expect(images.body).toEqual([
      { id: expect.any(Number), created_at: expect.any(Number), model: "image-model-2-1k", url },
    ]);
    expect((await bob.call("GET", "/console/api/me/images")).body).toEqual([]);

    await env.gw.gateway.ctx.requestLogs.flush();
    const spend = await alice.call("GET", "/console/api/me/spend?days=7&by=model");
    expect(spend.status).toBe(200);
    expect(spend.body.buckets).toHaveLength(7);
    const today = spend.body.buckets[6];
    expect(today.series["image-model-2-1k"]).toBeGreaterThan(0);
    expect(today.spend).toBe(today.series["image-model-2-1k"]);
    expect((await alice.call("GET", "/console/api/me/spend?days=0")).status).toBe(400);

    // Once past its hour, the token is refused.
    await env.gw.gateway.ctx.store.db
      .updateTable("tokens")
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where("name", "=", "console playground")
      .execute();
    env.gw.gateway.ctx.auth.invalidate();
    const expired = await postImages(env.gw, issued.body.key, { model: "image-model-2-1k", prompt: "again" });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("token_expired");

    // The next playground token revokes the ones that ran out.
    expect((await alice.call("POST", "/console/api/me/playground-token")).status).toBe(200);
    const playground = (await alice.call("GET", "/console/api/me/tokens")).body.filter(
      (t: { name: string }) => t.name === "console playground",
    );
    expect(playground.map((t: { status: string }) => t.status).sort()).toEqual(["enabled", "revoked"]);
  });

  it("lists a generated image by the time its answer arrives, however slowly the list is written", async () => {
    const issued = await alice.call("POST", "/console/api/me/playground-token");
    const add = UserImages.prototype.add;
    // The list's write lands well after the image is stored and the charge settled.
    const slow = vi.spyOn(UserImages.prototype, "add").mockImplementation(async function (this: UserImages, ...args) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return add.apply(this, args);
    });
    try {
      const image = await postImages(env.gw, issued.body.key, { model: "image-model-2-1k", prompt: "a blue square" });
      expect(image.status).toBe(200);
      const listed = await alice.call("GET", "/console/api/me/images?limit=1");
      expect(listed.body.map((i: { url: string }) => i.url)).toEqual([image.body.data[0].url]);
      expect(slow).toHaveBeenCalledTimes(1);
    } finally {
      slow.mockRestore();
    }
  });

  it("never writes a token's key to the log", async () => {
    const created = await alice.call("POST", "/console/api/me/tokens", { name: "quiet" });
    const playground = await alice.call("POST", "/console/api/me/playground-token");
    const logs = env.gw.logs.join("\n");
    for (const key of [created.body.key, playground.body.key]) {
      expect(key).toMatch(/^sk-/);
      expect(logs).not.toContain(key);
    }
  });

  it("answers 401 to the user API without a session", async () => {
    const anonymous = new ConsoleClient(env.gw.url);
    for (const path of ["/console/api/me", "/console/api/me/tokens", "/console/api/me/images"]) {
      expect((await anonymous.call("GET", path)).status, path).toBe(401);
    }
    expect((await anonymous.call("POST", "/console/api/me/playground-token")).status).toBe(401);
  });
});
