import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { call, eventually, sentRow, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`a running task [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 60_000, queuedFraction: 0, progressSteps: 100 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("shows IN_PROGRESS with partial progress, the upstream id in data and finish_time 0", async () => {
      const { gw } = env;
      const user = await gw.createUser();
      const sub = await submit(gw.url, user.key, "audioa", "MUSIC", { prompt: "long song" });
      const taskId = sub.body.data as string;
      const record = await waitForTask(
        gw.url,
        user.key,
        "audioa",
        taskId,
        (r) => r.status === "IN_PROGRESS" && r.progress !== "0%",
      );
      const row = await gw.gateway.ctx.store.db
        .selectFrom("tasks")
        .selectAll()
        .where("task_id", "=", taskId)
        .executeTakeFirstOrThrow();
      expect(record.finish_time).toBe(0);
      expect(record.start_time).toBeGreaterThan(0);
      expect(record.fail_reason).toBe("");
      expect("result_url" in record).toBe(false);
      expect(record.progress).toMatch(/^\d{1,2}%$/);
      expect(record.data).toEqual({ progress: record.progress, status: "IN_PROGRESS", task_id: row.upstream_id });
    });

    it("logs an unknown upstream status word and keeps the task running", async () => {
      const { gw } = env;
      const user = await gw.createUser();
      const sub = await submit(gw.url, user.key, "audioa", "MUSIC", { prompt: "odd one [odd-status]" });
      await eventually(async () =>
        gw.logs.some((l) => l.includes("unknown upstream task status") && l.includes("PAUSED_FOR_REVIEW")),
      );
      const res = await call(gw.url, user.key, "GET", `/audioa/fetch/${sub.body.data}`);
      expect(res.status).toBe(200);
      expect(["SUBMITTED", "QUEUED", "IN_PROGRESS"]).toContain(res.body.data.status);
      expect(res.body.data.data).toEqual({
        progress: res.body.data.progress,
        status: res.body.data.status,
        task_id: expect.any(String),
      });
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`generate-record callbacks [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      // Polls so rare that only the callbacks can bring the task to its end within the test.
      env = await startTaskEnv(kind, {
        sim: { generateRecord: { completeAfterMs: 300 } },
        config: { tasks: { pollIntervalMs: 600_000, maxPollIntervalMs: 600_000 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("makes the poller look at the task at once when the upstream calls back", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser();
      const sub = await submit(gw.url, user.key, "audiob", "MUSIC", { prompt: "quick one" });
      const record = await waitForTask(gw.url, user.key, "audiob", sub.body.data);
      expect(record.status).toBe("SUCCESS");
      expect(sim.received.filter((r) => r.path.startsWith("/api/v1/generate/record-info")).length).toBeGreaterThan(0);
    });

    it("answers a callback for an unknown secret with 404 and needs no token", async () => {
      const { gw } = env;
      const unknown = await call(gw.url, null, "POST", "/audiob/callback/ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", {
        code: 200,
        data: { callbackType: "complete", task_id: "x", data: [] },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: "not_found", data: null });
    });

    it("treats a forged callback as a hint only: the task stays as the upstream says", async () => {
      const { gw } = env;
      const user = await gw.createUser();
      const slow = await submit(gw.url, user.key, "audiob", "MUSIC", { prompt: "slow [fail]" });
      const row = await sentRow(gw, slow.body.data);
      const forged = await call(gw.url, null, "POST", `/audiob/callback/${row.callback_secret}`, {
        code: 200,
        data: {
          callbackType: "complete",
          task_id: row.upstream_id,
          data: [{ id: "fake", audioUrl: "https://evil.example/x.mp3" }],
        },
      });
      expect(forged.status).toBe(200);
      const record = await waitForTask(gw.url, user.key, "audiob", slow.body.data);
      expect(record.status).toBe("FAILURE");
      expect(JSON.stringify(record)).not.toContain("evil.example");
    });
  });
}
