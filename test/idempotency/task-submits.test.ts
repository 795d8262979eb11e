import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigOverrides } from "../../src/config/load.js";
import { startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { FAST_TASKS, startTaskEnv, type TaskEnv, waitForTask } from "../tasks/harness.js";
import { chargesOf, post, tasksOf } from "./harness.js";

const TASK_ID = /^task_[0-9A-Za-z]{32}$/;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`Idempotency-Key on task submits [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      // The upstream answers slowly, so the duplicates really arrive while the first one runs.
      env = await startTaskEnv(kind, { sim: { taskRelay: { latencyMs: 200 }, generateRecord: { latencyMs: 200 } } });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("runs 20 concurrent submits with one key once: one task, one charge, the same task id in every answer", async () => {
      const user = await env.gw.createUser();
      const key = randomUUID();
      const body = { prompt: "one song only", tags: "pop" };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key }),
        ),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const ids = new Set(answers.map((a) => a.body.data));
      expect(ids.size).toBe(1);
      const [taskId] = [...ids];
      expect(taskId).toMatch(TASK_ID);
      for (const a of answers) {
        expect(a.body).toEqual({ code: "success", message: "task submitted successfully", data: taskId });
      }
      // Exactly one answer ran; the others are marked as replays.
      expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(19);

      const tasks = await tasksOf(env.gw, user.userId);
      expect(tasks.map((t) => t.task_id)).toEqual([taskId]);
      const charges = await chargesOf(env.gw, user.userId);
      expect(charges).toHaveLength(1);
      expect(charges[0]?.reference).toBe(`task:${taskId}`);
      expect(await env.gw.balance(user.userId)).toBe(10_000_000 + (charges[0]?.amount ?? 0));
    });

    it("refuses the same key with another body with 409 in the envelope, and charges nothing", async () => {
      const user = await env.gw.createUser();
      const key = `order-${randomUUID()}`;
      const first = await post(
        env.gw.url,
        user.key,
        "/audiob/submit/MUSIC",
        { prompt: "a calm song", title: "Calm" },
        {
          "Idempotency-Key": key,
        },
      );
      expect(first.status).toBe(200);
      const before = await env.gw.balance(user.userId);

      const other = await post(
        env.gw.url,
        user.key,
        "/audiob/submit/MUSIC",
        { prompt: "a loud song" },
        {
          "Idempotency-Key": key,
        },
      );
      expect(other.status).toBe(409);
      expect(other.body).toEqual({
        code: "idempotency_key_reused",
        message: "This Idempotency-Key was used with a different request.",
        data: null,
      });
      // Another path with the same body is another request too.
      const otherPath = await post(
        env.gw.url,
        user.key,
        "/audioa/submit/MUSIC",
        { prompt: "a calm song", title: "Calm" },
        {
          "Idempotency-Key": key,
        },
      );
      expect(otherPath.status).toBe(409);
      expect(otherPath.body.code).toBe("idempotency_key_reused");
      expect(await env.gw.balance(user.userId)).toBe(before);
      expect(await tasksOf(env.gw, user.userId)).toHaveLength(1);

      // Key order does not make another request.
      const reordered = await post(
        env.gw.url,
        user.key,
        "/audiob/submit/MUSIC",
        { title: "Calm", prompt: "a calm song" },
        { "Idempotency-Key": key },
      );
      expect(reordered.status).toBe(200);
      expect(reordered.body.data).toBe(first.body.data);
    });

    it("treats the same body with another key, or from another token, as a new request", async () => {
      const user = await env.gw.createUser();
      const tokenB = await env.gw.admin("POST", `/users/${user.userId}/tokens`, { name: "second" });
      const body = { prompt: "same body", tags: "jazz" };
      const a = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": "k-1" });
      const b = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": "k-2" });
      const c = await post(env.gw.url, tokenB.body.data.key, "/audioa/submit/MUSIC", body, {
        "Idempotency-Key": "k-1",
      });
      for (const r of [a, b, c]) expect(r.status).toBe(200);
      expect(new Set([a.body.data, b.body.data, c.body.data]).size).toBe(3);
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(3);
    });

    it("without the header, every submit creates and charges a task as before", async () => {
      const user = await env.gw.createUser();
      const body = { prompt: "twice please" };
      const a = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body);
      const b = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(a.body.data).not.toBe(b.body.data);
      expect(a.headers.get("idempotent-replayed")).toBeNull();
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(2);
    });

    it("refuses an invalid Idempotency-Key with 400 naming the header, before anything is charged", async () => {
      const user = await env.gw.createUser();
      const before = await env.gw.balance(user.userId);
      for (const value of ["x".repeat(256), "caf\u00e9"]) {
        const res = await post(
          env.gw.url,
          user.key,
          "/audioa/submit/MUSIC",
          { prompt: "p" },
          {
            "Idempotency-Key": value,
          },
        );
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("invalid_request");
        expect(res.body.message.toLowerCase()).toContain("idempotency-key");
        expect(res.body.data).toBeNull();
      }
      expect(await env.gw.balance(user.userId)).toBe(before);
      expect(await tasksOf(env.gw, user.userId)).toHaveLength(0);
    });

    it("forgets a refused request, so the retry with the same key runs once the cause is gone", async () => {
      const user = await env.gw.createUser({ quota: 0 });
      const key = randomUUID();
      const body = { prompt: "when I can pay" };
      const refused = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("insufficient_quota");
      const topup = await env.gw.admin("POST", `/users/${user.userId}/topup`, { amount: 10_000_000 });
      expect(topup.status).toBe(200);
      const retried = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
      expect(retried.status).toBe(200);
      const again = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
      expect(again.body.data).toBe(retried.body.data);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await chargesOf(env.gw, user.userId)).toHaveLength(1);
    });

    it("documents the Idempotency-Key header on every submit and on image generation in the OpenAPI document", async () => {
      const doc = (await (await fetch(`${env.gw.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { parameters?: { in: string; name: string; required?: boolean }[] }>>;
      };
      const creating = Object.keys(doc.paths).filter(
        (p) => (p.includes("/submit/") && !p.includes("{action}")) || p === "/v1/images/generations",
      );
      expect(creating.length).toBeGreaterThanOrEqual(5);
      for (const p of creating) {
        const header = doc.paths[p]?.post?.parameters?.find((x) => x.in === "header" && x.name === "idempotency-key");
        expect(header, p).toBeDefined();
        expect(header?.required ?? false).toBe(false);
      }
    });

    it("replays the same task id for a task that has since ended, and the record is unchanged by the replay", async () => {
      const user = await env.gw.createUser();
      const key = randomUUID();
      const body = { prompt: "finish first" };
      const first = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
      const done = await waitForTask(env.gw.url, user.key, "audioa", first.body.data);
      expect(done.status).toBe("SUCCESS");
      const replay = await post(env.gw.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
      expect(replay.status).toBe(200);
      expect(replay.body.data).toBe(first.body.data);
      expect(await waitForTask(env.gw.url, user.key, "audioa", first.body.data)).toEqual(done);
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`Idempotency-Key across a restart [${kind}]`, () => {
    it("answers the first task id after the gateway restarts on the same store, and still refuses another body", async () => {
      const sim = await startSimulator({ seed: 7, keys: ["sim-key"] });
      const overrides: ConfigOverrides = FAST_TASKS;
      const first = await startTestGateway(kind, overrides, { keepStore: true });
      const databaseUrl = first.gateway.ctx.config.databaseUrl;
      let firstOpen = true;
      try {
        await first.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
        const user = await first.createUser();
        const key = randomUUID();
        const body = { prompt: "survive a restart" };
        const before = await post(first.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
        expect(before.status).toBe(200);
        await first.close();
        firstOpen = false;

        const second = await startTestGateway(kind, overrides, { databaseUrl, dataDir: first.dataDir });
        try {
          const after = await post(second.url, user.key, "/audioa/submit/MUSIC", body, { "Idempotency-Key": key });
          expect(after.status).toBe(200);
          expect(after.body).toEqual(before.body);
          expect(after.headers.get("idempotent-replayed")).toBe("true");
          const other = await post(
            second.url,
            user.key,
            "/audioa/submit/MUSIC",
            { prompt: "another" },
            {
              "Idempotency-Key": key,
            },
          );
          expect(other.status).toBe(409);
          expect(other.body.code).toBe("idempotency_key_reused");
          expect(await chargesOf(second, user.userId)).toHaveLength(1);
          expect(await tasksOf(second, user.userId)).toHaveLength(1);
        } finally {
          await second.close();
        }
      } finally {
        if (firstOpen) await first.close();
        await first.dropStore();
        await sim.close();
      }
    });
  });
}
