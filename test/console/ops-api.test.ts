import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { eventually, startTaskEnv, submit, type TaskEnv, waitForTask } from "../tasks/harness.js";

const QUOTA = 10_000_000;
const BAD_KEY = "wrong-upstream-key-7f3a9c";

/** A webhook receiver that refuses (500) until told to accept. */
async function startReceiver() {
  let accept = false;
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push(body);
      res.statusCode = accept ? 200 : 500;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    accept: () => {
      accept = true;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function postImage(url: string, key: string, model: string) {
  const res = await fetch(`${url}/v1/images/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, prompt: "a lighthouse" }),
  });
  return res.status;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`operator views of the admin API [${kind}]`, () => {
    let env: TaskEnv;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let imageChannel: number;
    let badChannel: number;
    let alice: { userId: number; key: string };
    let bob: { userId: number; key: string };
    let taskId: string;
    let taskQuota: number;

    beforeAll(async () => {
      receiver = await startReceiver();
      env = await startTaskEnv(kind, {
        config: {
          webhooks: { allowPrivateUrls: true, tickMs: 20, retryBaseMs: 50, maxAgeSeconds: 1, timeoutMs: 5000 },
        },
      });
      const { gw } = env;
      imageChannel = await gw.createChannel({ type: "gemini", baseUrl: env.sim.url, models: ["image-model-2-1k"] });
      badChannel = await gw.createChannel({
        type: "gemini",
        baseUrl: env.sim.url,
        models: ["image-model-2-4k"],
        key: BAD_KEY,
      });
      alice = await gw.createUser({ quota: QUOTA });
      bob = await gw.createUser({ quota: QUOTA });
      expect((await gw.admin("PUT", `/users/${alice.userId}/webhook`, { url: receiver.url })).status).toBe(200);

      expect(await postImage(gw.url, alice.key, "image-model-2-1k")).toBe(200);
      expect(await postImage(gw.url, bob.key, "image-model-2-4k")).toBeGreaterThanOrEqual(400);
      const sub = await submit(gw.url, alice.key, "audioa", "MUSIC", { prompt: "night drive", mv: "chirp-v3-5" });
      expect(sub.status).toBe(200);
      taskId = sub.body.data;
      const record = await waitForTask(gw.url, alice.key, "audioa", taskId);
      expect(record.status).toBe("SUCCESS");
      taskQuota = record.quota;
      await gw.gateway.ctx.requestLogs.flush();
    });
    afterAll(async () => {
      await env?.close();
      await receiver?.close();
    });

    it("draws the traffic just run into the overview's buckets, by model and by channel", async () => {
      const { gw } = env;
      const spent = QUOTA - (await gw.balance(alice.userId)) + (QUOTA - (await gw.balance(bob.userId)));
      const res = await gw.admin("GET", "/overview?minutes=10&bucket_seconds=60&by=model");
      expect(res.status).toBe(200);
      const o = res.body.data;
      expect(o.buckets).toHaveLength(10);
      expect(o.buckets.at(-1).start).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      const sum = (f: (b: any) => number) => o.buckets.reduce((n: number, b: any) => n + f(b), 0);
      expect(sum((b) => b.requests)).toBe(3);
      expect(sum((b) => b.errors)).toBe(1);
      expect(sum((b) => b.spend)).toBe(spent);
      const perModel = (model: string, field: "requests" | "errors" | "spend") =>
        sum((b) => b.series[model]?.[field] ?? 0);
      expect(perModel("chirp-v3-5", "spend")).toBe(taskQuota);
      expect(perModel("image-model-2-1k", "requests")).toBe(1);
      expect(perModel("image-model-2-1k", "spend")).toBe(spent - taskQuota);
      expect(perModel("image-model-2-4k", "errors")).toBe(1);
      expect(perModel("image-model-2-4k", "spend")).toBe(0);
      expect(o.tasks_by_state).toEqual({ SUCCESS: 1 });
      expect(o.open_charges).toEqual({ count: 0, quota: 0 });

      const byChannel = (await gw.admin("GET", "/overview?minutes=10&bucket_seconds=600&by=channel")).body.data;
      expect(byChannel.buckets).toHaveLength(1);
      expect(Object.keys(byChannel.buckets[0].series).sort()).toEqual(
        [imageChannel, badChannel, env.relayChannelId].map(String).sort(),
      );
      const bySurface = (await gw.admin("GET", "/overview?minutes=10&bucket_seconds=600")).body.data;
      expect(Object.keys(bySurface.buckets[0].series).sort()).toEqual(["audioa", "images"]);
    });

    it("answers a range of days and refuses a range it cannot draw, naming the field", async () => {
      const { gw } = env;
      const now = Math.floor(Date.now() / 1000);
      const days = await gw.admin("GET", `/overview?from=${now - 7 * 86400}&to=${now + 1}&bucket_seconds=86400`);
      expect(days.status).toBe(200);
      expect(days.body.data.buckets).toHaveLength(8);
      expect(days.body.data.buckets.reduce((n: number, b: any) => n + b.requests, 0)).toBe(3);
      const tooMany = await gw.admin("GET", "/overview?minutes=1000&bucket_seconds=1");
      expect(tooMany.status).toBe(400);
      expect(JSON.stringify(tooMany.body)).toContain("bucket_seconds");
      expect((await gw.admin("GET", "/overview?by=token")).status).toBe(400);
      const backwards = await gw.admin("GET", `/overview?from=${now}&to=${now - 60}`);
      expect(backwards.status).toBe(400);
      expect(JSON.stringify(backwards.body)).toContain("to");
    });

    it("searches users by part of the name or email, any case, and pages by id", async () => {
      const { gw } = env;
      for (const name of ["Alice Smith", "malicious", "bob_x", "bobby"]) {
        expect((await gw.admin("POST", "/users", { name })).status).toBe(200);
      }
      const mail = await gw.admin("POST", "/users", { name: "carol" });
      await gw.gateway.ctx.store.db
        .updateTable("users")
        .set({ email: "carol.alison@example.com" })
        .where("id", "=", mail.body.data.id)
        .execute();
      const names = async (query: string) =>
        ((await gw.admin("GET", `/users?${query}`)).body.data as any[]).map((u) => u.name);
      expect(await names("q=ALI")).toEqual(["Alice Smith", "malicious", "carol"]);
      expect(await names("q=example.COM")).toEqual(["carol"]);
      const carol = (await gw.admin("GET", "/users?q=carol")).body.data[0];
      expect(carol.email).toBe("carol.alison@example.com");
      expect((await gw.admin("GET", `/users/${carol.id}`)).body.data.email).toBe("carol.alison@example.com");
      expect(await names("q=_")).toEqual(["bob_x"]);
      expect(await names("q=%25")).toEqual([]);
      const first = (await gw.admin("GET", "/users?q=bob&limit=1")).body.data;
      expect(first.map((u: any) => u.name)).toEqual(["bob_x"]);
      expect(await names(`q=bob&limit=1&after=${first[0].id}`)).toEqual(["bobby"]);
    });

    it("shows each channel's health with the median latency of its logged requests", async () => {
      const { gw } = env;
      const logs = (await gw.admin("GET", `/request-logs?channel_id=${imageChannel}`)).body.data;
      expect(logs).toHaveLength(1);
      const channels = (await gw.admin("GET", "/channels")).body.data as any[];
      const good = channels.find((c) => c.id === imageChannel);
      expect(good.latency_ms_p50).toBe(logs[0].latency_ms);
      expect(channels.find((c) => c.id === env.recordChannelId).latency_ms_p50).toBeNull();
      const bad = (await gw.admin("GET", `/channels/${badChannel}`)).body.data;
      expect(bad.last_error).toBeTruthy();
      expect(bad.recent_success_rate).toBeLessThan(1);
      expect(JSON.stringify(channels)).not.toContain(BAD_KEY);
    });

    it("tests a channel with one upstream call, never showing its key, health unchanged", async () => {
      const { gw } = env;
      const before = (await gw.admin("GET", `/channels/${env.relayChannelId}`)).body.data;
      const good = await gw.admin("POST", `/channels/${env.relayChannelId}/test`);
      expect(good.status).toBe(200);
      expect(good.body.data).toMatchObject({ ok: true, error: null });
      expect(good.body.data.latency_ms).toBeGreaterThanOrEqual(0);
      const after = (await gw.admin("GET", `/channels/${env.relayChannelId}`)).body.data;
      expect(after.request_count).toBe(before.request_count);
      expect(after.last_success_at).toBe(before.last_success_at);

      // A relay with a key the upstream refuses; disabled, so no task is routed to it.
      const refusedRelay = await gw.admin("POST", "/channels", {
        name: "refused-relay",
        type: "task-relay",
        base_url: env.sim.url,
        key: BAD_KEY,
        models: ["audioa"],
        status: "disabled",
      });
      expect(refusedRelay.status).toBe(200);
      const bad = await gw.admin("POST", `/channels/${refusedRelay.body.data.id}/test`);
      expect(bad.body.data.ok).toBe(false);
      expect(bad.body.data.error).toMatch(/HTTP 40[13]/);

      const unreachableKey = "unreachable-secret-key-51d0";
      const down = await gw.createChannel({
        type: "openai-chat",
        baseUrl: "http://127.0.0.1:1",
        models: ["nothing"],
        key: unreachableKey,
      });
      const refused = await gw.admin("POST", `/channels/${down}/test`);
      expect(refused.body.data.ok).toBe(false);
      expect(refused.body.data.error).toBeTruthy();
      for (const r of [good, bad, refused]) {
        expect(JSON.stringify(r.body)).not.toContain(BAD_KEY);
        expect(JSON.stringify(r.body)).not.toContain(unreachableKey);
        expect(JSON.stringify(r.body)).not.toContain("sim-key");
      }
      expect(gw.logs.join("\n")).not.toContain(unreachableKey);
      expect((await gw.admin("POST", "/channels/999999/test")).status).toBe(404);
    });

    it("filters tasks by channel and shows a task's full record with its upstream history", async () => {
      const { gw } = env;
      const onRelay = (await gw.admin("GET", `/tasks?channel_id=${env.relayChannelId}`)).body.data;
      expect(onRelay.map((t: any) => t.task_id)).toEqual([taskId]);
      expect((await gw.admin("GET", `/tasks?channel_id=${env.recordChannelId}`)).body.data).toEqual([]);
      expect(
        (await gw.admin("GET", `/tasks?channel_id=${env.relayChannelId}&status=FAILURE&platform=audioa`)).body.data,
      ).toEqual([]);
      expect((await gw.admin("GET", "/tasks?channel_id=abc")).status).toBe(400);

      const detail = await gw.admin("GET", `/tasks/${taskId}`);
      expect(detail.status).toBe(200);
      const t = detail.body.data;
      expect(t).toMatchObject({ task_id: taskId, status: "SUCCESS", user_id: alice.userId, quota: taskQuota });
      expect(t.properties.origin_model_name).toBe("chirp-v3-5");
      expect(t).not.toHaveProperty("callback_secret");
      const events = t.history.map((h: any) => h.event);
      expect(events[0]).toBe("created");
      const moves = t.history.filter((h: any) => h.event === "status").map((h: any) => h.detail);
      expect(moves[0]).toMatch(/^NOT_START -> SUBMITTED, upstream id /);
      expect(moves.at(-1)).toMatch(/ -> SUCCESS/);
      expect((await gw.admin("GET", "/tasks/task_nope")).status).toBe(404);
    });

    it("browses the request log newest first with filters and a cursor", async () => {
      const { gw } = env;
      const all = (await gw.admin("GET", "/request-logs")).body.data as any[];
      expect(all.map((r) => r.model)).toEqual(["image-model-2-4k", "image-model-2-1k"]);
      expect(all[0]).toMatchObject({ user_id: bob.userId, channel_id: badChannel, quota: 0 });
      expect(all[0].status).toBeGreaterThanOrEqual(400);
      const page = (await gw.admin("GET", "/request-logs?limit=1")).body.data;
      expect(page.map((r: any) => r.id)).toEqual([all[0].id]);
      const next = (await gw.admin("GET", `/request-logs?limit=1&after=${page[0].id}`)).body.data;
      expect(next.map((r: any) => r.id)).toEqual([all[1].id]);
      expect((await gw.admin("GET", `/request-logs?user_id=${alice.userId}`)).body.data).toHaveLength(1);
      expect((await gw.admin("GET", "/request-logs?model=image-model-2-1k&status=200")).body.data).toHaveLength(1);
      expect((await gw.admin("GET", `/request-logs?status=${all[0].status}`)).body.data).toHaveLength(1);
      expect((await gw.admin("GET", "/request-logs?status=abc")).status).toBe(400);
    });

    it("queues a failed webhook delivery again and the dispatcher delivers it", async () => {
      const { gw } = env;
      const failed = await eventually(async () => {
        const rows = (await gw.admin("GET", `/webhooks?task_id=${taskId}`)).body.data as any[];
        return rows.find((r) => r.status === "failed");
      });
      receiver.accept();
      const retried = await gw.admin("POST", `/webhooks/${failed.id}/retry`);
      expect(retried.status).toBe(200);
      expect(retried.body.data).toMatchObject({ id: failed.id, status: "pending" });
      const delivered = await eventually(async () => {
        const rows = (await gw.admin("GET", `/webhooks?task_id=${taskId}`)).body.data as any[];
        return rows.find((r) => r.id === failed.id && r.status === "delivered");
      });
      expect(delivered.attempts).toBe(failed.attempts + 1);
      expect(JSON.parse(receiver.received.at(-1) as string).data.task_id).toBe(taskId);
      expect((await gw.admin("POST", `/webhooks/${failed.id}/retry`)).status).toBe(409);
      expect((await gw.admin("POST", "/webhooks/999999/retry")).status).toBe(404);
    });
  });
}
