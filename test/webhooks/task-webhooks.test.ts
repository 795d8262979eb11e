import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/webhooks/signature.js";
import { post, tasksOf } from "../idempotency/harness.js";
import type { StoreKind, TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { eventually, fetchTask, startTaskEnv, type TaskEnv, waitForTask } from "../tasks/harness.js";
import { type Delivery, type Receiver, startReceiver } from "./receiver.js";

/** A user created through the admin API, with the signing secret it shows once, and a token. */
async function createWebhookUser(gw: TestGateway, name: string) {
  const user = await gw.admin("POST", "/users", { name, quota: 10_000_000 });
  expect(user.status).toBe(200);
  const secret = user.body.data.webhook_secret as string;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
  const token = await gw.admin("POST", `/users/${user.body.data.id}/tokens`, { name: "default" });
  return { userId: user.body.data.id as number, key: token.body.data.key as string, secret };
}

function verified(d: Delivery, secret: string): boolean {
  return verifyWebhook(secret, d.id, Number(d.timestamp), d.body, d.signature);
}

async function deliveriesOf(gw: TestGateway, query: string): Promise<any[]> {
  const res = await gw.admin("GET", `/webhooks?${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`webhooks when a task ends [${kind}]`, () => {
    let env: TaskEnv;
    let receiver: Receiver;
    beforeAll(async () => {
      // /flaky refuses the first two attempts of every webhook.
      receiver = await startReceiver((path, earlier) => (path.startsWith("/flaky") && earlier < 2 ? 500 : 200));
      env = await startTaskEnv(kind, {
        config: {
          webhooks: { allowPrivateUrls: true, tickMs: 20, retryBaseMs: 50, maxAgeSeconds: 3600, timeoutMs: 5000 },
        },
      });
    });
    afterAll(async () => {
      await env?.close();
      await receiver?.close();
    });

    it("delivers one signed webhook per ended task, SUCCESS and FAILURE, carrying the record a fetch shows", async () => {
      const user = await createWebhookUser(env.gw, "hooked");
      const submits = [
        { family: "audioa", prompt: "a happy song", status: "SUCCESS" },
        { family: "audioa", prompt: "a sad song [fail]", status: "FAILURE" },
        { family: "audiob", prompt: "a quiet song", status: "SUCCESS" },
        { family: "audiob", prompt: "a broken song [fail]", status: "FAILURE" },
      ];
      const tasks: { family: string; prompt: string; status: string; taskId: string }[] = [];
      for (const s of submits) {
        const res = await post(env.gw.url, user.key, `/${s.family}/submit/MUSIC`, {
          prompt: s.prompt,
          callback_url: `${receiver.url}/hooks/ended?family=${s.family}`,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        tasks.push({ ...s, taskId: res.body.data as string });
      }
      const rows = await eventually(async () => {
        const list = await deliveriesOf(env.gw, `user_id=${user.userId}`);
        return list.length === 4 && list.every((d) => d.status === "delivered") ? list : null;
      });

      for (const t of tasks) {
        const record = (await fetchTask(env.gw.url, user.key, t.family, t.taskId)).body.data;
        expect(record.status).toBe(t.status);
        const got = receiver.deliveries.filter((d) => JSON.parse(d.body).data.task_id === t.taskId);
        expect(got).toHaveLength(1);
        const [delivery] = got as [Delivery];
        expect(delivery.path).toBe(`/hooks/ended?family=${t.family}`);
        expect(verified(delivery, user.secret)).toBe(true);
        const payload = JSON.parse(delivery.body);
        expect(payload.type).toBe(t.status === "SUCCESS" ? "task.succeeded" : "task.failed");
        expect(Date.parse(payload.timestamp)).toBeGreaterThan(0);
        expect(payload.data).toEqual(record);
        const row = rows.find((r) => r.task_id === t.taskId);
        expect(row).toMatchObject({ webhook_id: delivery.id, attempts: 1, last_status: 200, last_error: null });
      }
      // Not signed for anyone else, and not for a changed body.
      const any = receiver.deliveries.find((d) => d.body.includes(tasks[0]?.taskId ?? "")) as Delivery;
      const other = await createWebhookUser(env.gw, "someone-else");
      expect(verified(any, other.secret)).toBe(false);
      expect(verifyWebhook(user.secret, any.id, Number(any.timestamp), `${any.body} `, any.signature)).toBe(false);
    });

    it("answers a submit the upstream refuses with its id, then one task.failed webhook with the reason", async () => {
      const user = await createWebhookUser(env.gw, "refused");
      for (const family of ["audioa", "audiob"]) {
        const res = await post(env.gw.url, user.key, `/${family}/submit/MUSIC`, {
          prompt: "lyrics [refuse]",
          callback_url: `${receiver.url}/hooks/refused?family=${family}`,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const taskId = res.body.data as string;
        const record = await waitForTask(env.gw.url, user.key, family, taskId);
        expect(record.status).toBe("FAILURE");
        expect(record.fail_reason).toContain("refused");
        const got = await eventually(async () => {
          const list = receiver.deliveries.filter((d) => JSON.parse(d.body).data.task_id === taskId);
          return list.length > 0 ? list : null;
        });
        await new Promise((r) => setTimeout(r, 200));
        expect(receiver.deliveries.filter((d) => JSON.parse(d.body).data.task_id === taskId)).toHaveLength(1);
        const payload = JSON.parse((got[0] as Delivery).body);
        expect(payload.type).toBe("task.failed");
        expect(payload.data).toEqual(record);
        expect(verified(got[0] as Delivery, user.secret)).toBe(true);
      }
      const balance = await env.gw.balance(user.userId);
      expect(balance).toBe(10_000_000);
      expect(await env.gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(balance);
    });

    it("retries a delivery the receiver refused twice, with the same webhook-id, and delivers it at the third attempt", async () => {
      const user = await createWebhookUser(env.gw, "flaky-receiver");
      const res = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", {
        prompt: "keep trying",
        callback_url: `${receiver.url}/flaky`,
      });
      const taskId = res.body.data as string;
      const [row] = await eventually(async () => {
        const list = await deliveriesOf(env.gw, `task_id=${taskId}`);
        return list[0]?.status === "delivered" ? list : null;
      });
      const attempts = receiver.deliveries.filter((d) => d.path === "/flaky" && d.body.includes(taskId));
      expect(attempts.map((d) => d.answered)).toEqual([500, 500, 200]);
      expect(new Set(attempts.map((d) => d.id))).toEqual(new Set([row.webhook_id]));
      for (const d of attempts) expect(verified(d, user.secret)).toBe(true);
      expect(row).toMatchObject({ status: "delivered", attempts: 3, last_status: 200, last_error: null });
      expect(row.delivered_at).toBeGreaterThan(0);
    });

    it("uses the user's default webhook when a submit has no callback_url, and a task's callback_url over it", async () => {
      const user = await createWebhookUser(env.gw, "default-hook");
      const set = await env.gw.admin("PUT", `/users/${user.userId}/webhook`, { url: `${receiver.url}/default` });
      expect(set.status).toBe(200);
      expect(set.body.data.webhook_url).toBe(`${receiver.url}/default`);
      expect(JSON.stringify(set.body)).not.toContain(user.secret);

      const plain = await post(env.gw.url, user.key, "/audiob/submit/MUSIC", { prompt: "no url given" });
      const own = await post(env.gw.url, user.key, "/audiob/submit/MUSIC", {
        prompt: "my own url",
        callback_url: `${receiver.url}/own`,
      });
      await eventually(async () => {
        const list = await deliveriesOf(env.gw, `user_id=${user.userId}&status=delivered`);
        return list.length === 2;
      });
      const forPlain = receiver.deliveries.filter((d) => d.body.includes(plain.body.data));
      const forOwn = receiver.deliveries.filter((d) => d.body.includes(own.body.data));
      expect(forPlain.map((d) => d.path)).toEqual(["/default"]);
      expect(forOwn.map((d) => d.path)).toEqual(["/own"]);
      for (const d of [...forPlain, ...forOwn]) expect(verified(d, user.secret)).toBe(true);
    });

    it("signs with the rotated secret once the operator rotates it", async () => {
      const user = await createWebhookUser(env.gw, "rotated");
      const rotated = await env.gw.admin("POST", `/users/${user.userId}/webhook-secret`);
      expect(rotated.status).toBe(200);
      const secret = rotated.body.data.webhook_secret as string;
      expect(secret).not.toBe(user.secret);
      const res = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", {
        prompt: "new secret",
        callback_url: `${receiver.url}/rotated`,
      });
      await eventually(async () => (await deliveriesOf(env.gw, `task_id=${res.body.data}&status=delivered`)).length);
      const [d] = receiver.deliveries.filter((x) => x.body.includes(res.body.data)) as [Delivery];
      expect(verified(d, secret)).toBe(true);
      expect(verified(d, user.secret)).toBe(false);
    });

    it("queues nothing for a task with neither a callback_url nor a default webhook", async () => {
      const user = await createWebhookUser(env.gw, "no-hook");
      const res = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", { prompt: "silent" });
      const record = await waitForTask(env.gw.url, user.key, "audioa", res.body.data);
      expect(record.status).toBe("SUCCESS");
      expect(await deliveriesOf(env.gw, `task_id=${res.body.data}`)).toEqual([]);
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`webhook targets are SSRF-guarded by default [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind);
    });
    afterAll(async () => {
      await env?.close();
    });

    it("refuses a callback_url to loopback, metadata or private addresses with 400, charging nothing", async () => {
      const user = await env.gw.createUser();
      const before = await env.gw.balance(user.userId);
      const refused = [
        "http://127.0.0.1:8080/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://10.0.0.7/hook",
        "http://localhost/hook",
      ];
      for (const family of ["audioa", "audiob"]) {
        for (const url of refused) {
          const res = await post(env.gw.url, user.key, `/${family}/submit/MUSIC`, { prompt: "p", callback_url: url });
          expect(res.status, url).toBe(400);
          expect(res.body.code).toBe("invalid_request");
          expect(res.body.message).toContain("body.callback_url");
          expect(res.body.data).toBeNull();
        }
      }
      for (const url of ["ftp://example.com/hook", "http://user:pass@example.com/hook", "not a url"]) {
        const res = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", { prompt: "p", callback_url: url });
        expect(res.status, url).toBe(400);
        expect(res.body.message).toContain("body.callback_url");
      }
      expect(await env.gw.balance(user.userId)).toBe(before);
      expect(await tasksOf(env.gw, user.userId)).toEqual([]);
    });

    it("refuses the same addresses as a user's default webhook", async () => {
      const user = await env.gw.createUser();
      for (const url of ["http://127.0.0.1/hook", "http://169.254.169.254/"]) {
        const res = await env.gw.admin("PUT", `/users/${user.userId}/webhook`, { url });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain("body.url");
      }
    });
  });
}
