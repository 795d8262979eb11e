import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptTask } from "../../src/core/tasks/submit.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  callerOf,
  kindOf,
  ledgerRowsOf,
  startTaskEnv,
  submit,
  submitPortsOf,
  type TaskEnv,
  waitForTask,
} from "./harness.js";

const PRICE = 50_000;

function expectConsistentFailure(record: any) {
  expect(record.status).toBe("FAILURE");
  expect(record.fail_reason).not.toBe("");
  expect(record.progress).toBe("100%");
  expect(record.finish_time).toBeGreaterThan(0);
  expect("result_url" in record).toBe(false);
  expect(record.data).toEqual({ progress: "100%", status: "FAILURE", task_id: "", fail_reason: record.fail_reason });
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`failed tasks are refunded exactly once [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 300 }, generateRecord: { completeAfterMs: 300 } },
        config: { tasks: { unsentGraceMs: 300 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    for (const family of ["audioa", "audiob"]) {
      it(`ends a ${family} task the upstream fails in FAILURE with fail_reason and one refund`, async () => {
        const { gw } = env;
        const user = await gw.createUser({ quota: 200_000 });
        const body = family === "audioa" ? { gpt_description_prompt: "a song [fail]" } : { prompt: "a song [fail]" };
        const sub = await submit(gw.url, user.key, family, "MUSIC", body);
        expect(sub.status).toBe(200);
        const taskId = sub.body.data as string;
        const record = await waitForTask(gw.url, user.key, family, taskId);
        expectConsistentFailure(record);
        expect(record.fail_reason).toBe("simulated failure");
        expect(record.quota).toBe(PRICE);
        expect(await gw.balance(user.userId)).toBe(200_000);
        expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
          { kind: "refund", amount: PRICE },
          { kind: "charge", amount: -PRICE },
        ]);
        expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(200_000);
      });

      it(`answers a refused ${family} submit with its id, then shows FAILURE with the reason and one refund`, async () => {
        const { gw } = env;
        const user = await gw.createUser({ quota: 200_000 });
        const sub = await submit(gw.url, user.key, family, "MUSIC", { prompt: "lyrics [refuse]" });
        expect(sub.status).toBe(200);
        const taskId = sub.body.data as string;
        expect(taskId).toMatch(/^task_/);
        const record = await waitForTask(gw.url, user.key, family, taskId);
        expectConsistentFailure(record);
        expect(record.fail_reason).toContain("refused");
        expect(record.fail_reason).not.toContain(env.sim.url);
        expect(await gw.balance(user.userId)).toBe(200_000);
        expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
          { kind: "refund", amount: PRICE },
          { kind: "charge", amount: -PRICE },
        ]);
      });
    }

    it("refuses a submit with too little quota before any upstream call, changing nothing", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: PRICE - 1 });
      const before = sim.received.length;
      const sub = await submit(gw.url, user.key, "audioa", "MUSIC", { prompt: "la la" });
      expect(sub.status).toBe(403);
      expect(sub.body).toMatchObject({ code: "insufficient_quota", data: null });
      expect(sim.received.length).toBe(before);
      expect(await gw.balance(user.userId)).toBe(PRICE - 1);
      const rows = await gw.gateway.ctx.store.db
        .selectFrom("tasks")
        .select("id")
        .where("user_id", "=", user.userId)
        .execute();
      expect(rows).toHaveLength(0);
      // The count of unfinished tasks went up and back down with the refused charge.
      expect(Number((await gw.gateway.ctx.users.get(user.userId))?.tasks_unfinished)).toBe(0);
      // And the next submit of a user with quota still passes after the refused one.
      const funded = await gw.createUser({ quota: PRICE });
      const [refused, accepted] = await Promise.all([
        submit(gw.url, user.key, "audioa", "MUSIC", { prompt: "la" }),
        submit(gw.url, funded.key, "audioa", "MUSIC", { prompt: "la" }),
      ]);
      expect([refused.status, accepted.status]).toEqual([403, 200]);
      expect(await gw.balance(funded.userId)).toBe(0);
    });

    it("fails and refunds a task that was charged but never sent", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: 200_000 });
      const { deps } = submitPortsOf(gw);
      // The submit path up to the charge, then a crash: the send step never runs.
      const accepted = await acceptTask(deps, {
        kind: kindOf("audioa", "MUSIC"),
        body: { prompt: "never sent" },
        caller: await callerOf(gw, user.key),
      });
      const taskId = accepted.row.task_id;
      expect(accepted.row.status).toBe("NOT_START");
      expect(await gw.balance(user.userId)).toBe(200_000 - PRICE);

      const record = await waitForTask(gw.url, user.key, "audioa", taskId);
      expectConsistentFailure(record);
      expect(record.fail_reason).toContain("not sent");
      expect(await gw.balance(user.userId)).toBe(200_000);
      expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
        { kind: "refund", amount: PRICE },
        { kind: "charge", amount: -PRICE },
      ]);
      expect(sim.received.some((r) => JSON.stringify(r.body).includes("never sent"))).toBe(false);
    });

    it("fails over to the next channel when the first is unreachable, and refunds when none answers", async () => {
      const { gw } = env;
      // A closed port: connection refused, a retryable failure.
      const dead = "http://127.0.0.1:9";
      const group = "failover";
      await gw.createChannel({ type: "task-relay", baseUrl: dead, models: ["audioa"], groups: [group], priority: 10 });
      const good = await gw.createChannel({
        type: "task-relay",
        baseUrl: env.sim.url,
        models: ["audioa"],
        groups: [group],
        priority: 0,
      });
      const user = await gw.createUser({ quota: 200_000, group });
      const sub = await submit(gw.url, user.key, "audioa", "MUSIC", { prompt: "failover" });
      expect(sub.status).toBe(200);
      const record = await waitForTask(gw.url, user.key, "audioa", sub.body.data);
      expect(record.status).toBe("SUCCESS");
      expect(record.channel_id).toBe(good);

      const lonely = "nowhere";
      await gw.createChannel({ type: "task-relay", baseUrl: dead, models: ["audioa"], groups: [lonely] });
      const other = await gw.createUser({ quota: 200_000, group: lonely });
      const failed = await submit(gw.url, other.key, "audioa", "MUSIC", { prompt: "no upstream" });
      expect(failed.status).toBe(200);
      const lost = await waitForTask(gw.url, other.key, "audioa", failed.body.data);
      expectConsistentFailure(lost);
      expect(lost.fail_reason).toContain("no upstream channel accepted the task");
      expect(lost.fail_reason).not.toContain("127.0.0.1:9");
      expect(await gw.balance(other.userId)).toBe(200_000);
      expect(await gw.gateway.ctx.ledger.ledgerSum(other.userId)).toBe(200_000);
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`a task that runs too long [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: {
          taskRelay: { completeAfterMs: 120_000, queuedFraction: 0 },
          generateRecord: { completeAfterMs: 120_000 },
        },
        config: { tasks: { timeoutSeconds: 1 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    for (const family of ["audioa", "audiob"]) {
      it(`ends a ${family} task in FAILURE with a consistent record and one refund after the timeout`, async () => {
        const { gw } = env;
        const user = await gw.createUser({ quota: 200_000 });
        const sub = await submit(gw.url, user.key, family, "MUSIC", { prompt: "slow song" });
        expect(sub.status).toBe(200);
        const taskId = sub.body.data as string;
        const record = await waitForTask(gw.url, user.key, family, taskId);
        expectConsistentFailure(record);
        expect(record.fail_reason).toContain("did not finish within 1 seconds");
        expect(await gw.balance(user.userId)).toBe(200_000);
        expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
          { kind: "refund", amount: PRICE },
          { kind: "charge", amount: -PRICE },
        ]);
        // Later polls cannot bring it back or refund it again.
        await new Promise((r) => setTimeout(r, 200));
        expect((await waitForTask(gw.url, user.key, family, taskId)).status).toBe("FAILURE");
        expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(200_000);
      });
    }
  });
}
