import { describe, expect, it } from "vitest";
import type { GatewayError } from "../../src/core/errors.js";
import type { NewTask } from "../../src/core/tasks/ports.js";
import { TaskStore } from "../../src/store/tasks.js";
import { useHotUserStore } from "../support/hot-user-pg.js";
import { HAS_PG } from "../support/postgres.js";

// A task's submit on PostgreSQL: the unfinished count, the hold and the task's row in one
// statement (src/store/postgres/task-submit.ts), and, when any part is refused, the query
// builder's transaction, which writes nothing and names the refusal.

describe.skipIf(!HAS_PG)("task submits on PostgreSQL", () => {
  const h = useHotUserStore(false);

  async function submitter(quota: number, tokenLimit: number | null = null) {
    const account = await h.hotUser(quota, 0, tokenLimit);
    const tasks = new TaskStore(h.store.db, account.ledger, "postgres");
    let n = 0;
    const submit = (overrides: Partial<NewTask> = {}) =>
      tasks.insertCharged({
        taskId: `task_submit_pg_${account.userId}_${n++}`,
        platform: "audioa",
        userId: account.userId,
        tokenId: account.tokenId,
        group: "default",
        channelId: 1,
        quota: 300,
        action: "MUSIC",
        properties: '{"title":"t"}',
        requestBody: '{"prompt":"p"}',
        callbackSecret: null,
        sendDeadlineMs: Date.now() + 60_000,
        chargeCloseBy: Date.now() + 3_600_000,
        ...overrides,
      });
    const state = async () => {
      const user = await h.store.db
        .selectFrom("users")
        .select("tasks_unfinished")
        .where("id", "=", account.userId)
        .executeTakeFirstOrThrow();
      const tasksStored = await h.store.db
        .selectFrom("tasks")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("user_id", "=", account.userId)
        .executeTakeFirstOrThrow();
      return {
        ...(await h.books(account.ledger, account.userId, account.tokenId)),
        unfinished: Number(user.tasks_unfinished),
        tasks: Number(tasksStored.n),
      };
    };
    return { ...account, tasks, submit, state };
  }

  it("counts, holds and inserts the task in one statement", async () => {
    const s = await submitter(10_000);
    const { value: row, statements } = await h.counted(() => s.submit({ unfinishedLimit: 5 }));
    expect(statements).toBe(1);
    expect(row).toMatchObject({ status: "NOT_START", user_id: s.userId, token_id: s.tokenId, quota: 300 });
    expect(row.properties).toBe('{"title":"t"}');
    expect(await s.tasks.findOwned(s.userId, row.task_id)).toMatchObject({ id: row.id, status: "NOT_START" });
    expect(await s.state()).toEqual({
      balance: 9_700,
      usedQuota: 300,
      tokenUsed: 300,
      ledgerSum: 9_700,
      open: 1,
      unfinished: 1,
      tasks: 1,
    });
  });

  it("refuses past the unfinished limit, the balance or the token's limit, writes nothing and names which", async () => {
    const limited = await submitter(10_000);
    await limited.submit({ unfinishedLimit: 1 });
    await expect(limited.submit({ unfinishedLimit: 1 })).rejects.toMatchObject({ errorName: "GW_ERR_RATE_LIMITED" });
    expect(await limited.state()).toMatchObject({ balance: 9_700, open: 1, unfinished: 1, tasks: 1 });

    const poor = await submitter(100);
    await expect(poor.submit()).rejects.toMatchObject({ errorName: "GW_ERR_INSUFFICIENT_QUOTA" });
    expect(await poor.state()).toEqual({
      balance: 100,
      usedQuota: 0,
      tokenUsed: 0,
      ledgerSum: 100,
      open: 0,
      unfinished: 0,
      tasks: 0,
    });

    const capped = await submitter(10_000, 200);
    await expect(capped.submit()).rejects.toMatchObject({ errorName: "GW_ERR_TOKEN_QUOTA_EXCEEDED" });
    expect(await capped.state()).toMatchObject({ balance: 10_000, tokenUsed: 0, open: 0, unfinished: 0, tasks: 0 });
  });

  it("keeps one user's limit and balance exact under 60 concurrent submits", async () => {
    const s = await submitter(100_000);
    const results = await Promise.allSettled(Array.from({ length: 60 }, () => s.submit({ unfinishedLimit: 25 })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(25);
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as GatewayError).errorName).toBe("GW_ERR_RATE_LIMITED");
    }
    expect(await s.state()).toEqual({
      balance: 100_000 - 25 * 300,
      usedQuota: 25 * 300,
      tokenUsed: 25 * 300,
      ledgerSum: 100_000 - 25 * 300,
      open: 25,
      unfinished: 25,
      tasks: 25,
    });
  });
});
