import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { TaskStore } from "../../src/store/tasks.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`unfinished tasks per user [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ keys: ["sim-key"], taskRelay: { completeAfterMs: 600_000 } });
      gw = await startTestGateway(kind, { limits: { tasksInFlightPerUser: 2 } });
      await gw.createChannel({ type: "task-relay", baseUrl: sim.url, key: "sim-key", models: ["audioa"] });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    const submit = (key: string, prompt: string) =>
      fetch(`${gw.url}/audioa/submit/MUSIC`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ gpt_description_prompt: prompt }),
      });

    it("lets exactly the limit through of 25 parallel submits, and a finished task frees a slot", async () => {
      const { key, userId } = await gw.createUser({ quota: 100_000_000 });
      const before = await gw.balance(userId);
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => submit(key, `song ${i}`)));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(2);
      expect(statuses.filter((s) => s === 429)).toHaveLength(23);
      const passed = (await Promise.all(answers.filter((r) => r.status === 200).map((r) => r.json()))) as {
        data: string;
      }[];

      const ctx = gw.gateway.ctx;
      const tasks = await ctx.store.db.selectFrom("tasks").selectAll().where("user_id", "=", userId).execute();
      expect(tasks.map((t) => t.task_id).sort()).toEqual(passed.map((b) => b.data).sort());
      // Only the two accepted tasks were charged.
      const price = Number(tasks[0]?.quota);
      expect(await gw.balance(userId)).toBe(before - 2 * price);
      expect((await submit(key, "one more")).status).toBe(429);

      // The task ends (as the poller ends it on an upstream failure): one slot is free again.
      const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
      const first = tasks[0] as (typeof tasks)[number];
      // The sender and the poller may move the task on between our read and our fail, and the
      // fail is conditional on the status read: read again until the fail lands on a fresh one.
      let failed = false;
      for (let attempt = 0; attempt < 20 && !failed; attempt++) {
        const row = await ctx.store.db
          .selectFrom("tasks")
          .select("status")
          .where("id", "=", first.id)
          .executeTakeFirstOrThrow();
        failed = await store.fail(Number(first.id), row.status, "upstream failed");
      }
      expect(failed).toBe(true);
      const again = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(key, `again ${i}`)));
      expect(again.filter((r) => r.status === 200)).toHaveLength(1);
      const user = await ctx.users.get(userId);
      expect(Number(user?.tasks_unfinished)).toBe(2);
    });

    it("counts each user on their own", async () => {
      const a = await gw.createUser();
      const b = await gw.createUser();
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () => submit(a.key, "a")),
        ...Array.from({ length: 5 }, () => submit(b.key, "b")),
      ]);
      expect(answers.slice(0, 5).filter((r) => r.status === 200)).toHaveLength(2);
      expect(answers.slice(5).filter((r) => r.status === 200)).toHaveLength(2);
    });
  });
}
