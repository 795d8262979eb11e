import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptTask, sendTask } from "../../src/core/tasks/submit.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  callerOf,
  eventually,
  FAST_TASKS,
  kindOf,
  ledgerRowsOf,
  startTaskEnv,
  submit,
  submitPortsOf,
  type TaskEnv,
} from "./harness.js";

const PRICE = 50_000;

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  // Instances share PostgreSQL; a SQLite file has one owning process (see test/ops/store-owner.test.ts).
  if (kind === "postgres")
    describe.skipIf(!HAS_PG)(`two worker instances on one store [${kind}]`, () => {
      let env: TaskEnv;
      let second: TestGateway;
      const overrides = {
        ...FAST_TASKS,
        // Leases shorter than a poll: both instances keep taking the same tasks, the worst case.
        tasks: { ...FAST_TASKS.tasks, leaseMs: 100, pollIntervalMs: 20, workerTickMs: 5 },
      };
      beforeAll(async () => {
        env = await startTaskEnv(kind, {
          sim: {
            taskRelay: { completeAfterMs: 500, latencyMs: 150 },
            generateRecord: { completeAfterMs: 500, latencyMs: 150 },
          },
          config: overrides,
        });
        second = await startTestGateway(kind, overrides, { databaseUrl: env.gw.gateway.ctx.config.databaseUrl });
      });
      afterAll(async () => {
        await second?.close();
        await env?.close();
      });

      it("never finishes or refunds a task twice", async () => {
        const gateways = [env.gw, second];
        const user = await env.gw.createUser({ quota: 10_000_000 });
        const submits = [];
        for (let i = 0; i < 24; i++) {
          const gw = gateways[i % 2] as TestGateway;
          const family = i % 4 < 2 ? "audioa" : "audiob";
          const prompt = i % 3 === 0 ? `song ${i} [fail]` : `song ${i}`;
          submits.push(submit(gw.url, user.key, family, "MUSIC", { prompt }));
        }
        const taskIds = (await Promise.all(submits)).map((r) => {
          expect(r.status).toBe(200);
          return r.body.data as string;
        });
        const db = env.gw.gateway.ctx.store.db;
        const rows = await eventually(async () => {
          const all = await db.selectFrom("tasks").selectAll().where("task_id", "in", taskIds).execute();
          return all.every((r) => r.status === "SUCCESS" || r.status === "FAILURE") ? all : null;
        }, 30_000);
        let failures = 0;
        for (const row of rows) {
          const ledger = await ledgerRowsOf(env.gw, user.userId, row.task_id);
          if (row.status === "FAILURE") {
            failures += 1;
            expect(row.fail_reason).toBe("simulated failure");
            expect(ledger).toEqual([
              { kind: "refund", amount: PRICE },
              { kind: "charge", amount: -PRICE },
            ]);
          } else {
            expect(ledger).toEqual([
              { kind: "settle", amount: 0 },
              { kind: "charge", amount: -PRICE },
            ]);
          }
        }
        expect(failures).toBe(8);
        const expected = 10_000_000 - (24 - failures) * PRICE;
        expect(await env.gw.balance(user.userId)).toBe(expected);
        expect(await env.gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(expected);
      });
    });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`compare-and-set on the task status [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, { sim: { taskRelay: { completeAfterMs: 600_000 } } });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("lets only one of many racing FAILURE moves happen, with one refund", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const { store, deps } = submitPortsOf(gw);
      const accepted = await acceptTask(deps, {
        kind: kindOf("audioa", "MUSIC"),
        body: { prompt: "race" },
        caller: await callerOf(gw, user.key),
      });
      await sendTask(deps, accepted);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.fail(accepted.row.id, "SUBMITTED", `racer ${i}`)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const succeeded = await store.succeed(accepted.row, "SUBMITTED", [], "SUCCESS", "m");
      expect(succeeded).toBe(false);
      expect(await ledgerRowsOf(gw, user.userId, accepted.row.task_id)).toEqual([
        { kind: "refund", amount: PRICE },
        { kind: "charge", amount: -PRICE },
      ]);
      expect(await gw.balance(user.userId)).toBe(1_000_000);
    });

    it("claims a due task for one worker only while its lease runs", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const { store, deps } = submitPortsOf(gw);
      const accepted = await acceptTask(deps, {
        kind: kindOf("audioa", "MUSIC"),
        body: { prompt: "lease" },
        caller: await callerOf(gw, user.key),
      });
      await sendTask(deps, accepted);
      // Far in the future, so every task in the store is due and leases are judged at that time.
      const at = Date.now() + 3_600_000;
      const [a, b] = await Promise.all([
        store.claimDue("worker-a", at, 60_000, 10_000),
        store.claimDue("worker-b", at, 60_000, 10_000),
      ]);
      const mine = [...a, ...b].filter((t) => t.task_id === accepted.row.task_id);
      expect(mine).toHaveLength(1);
      expect(await store.claimDue("worker-c", at + 1000, 60_000, 10_000)).toEqual([]);
      expect((await store.claimDue("worker-c", at + 61_000, 60_000, 10_000)).map((t) => t.task_id)).toContain(
        accepted.row.task_id,
      );
    });
  });
}
