import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/database.js";
import { type RequestLogEntry, requestLogInsert } from "../../src/store/request-logs.js";
import { RetentionRows } from "../../src/store/retention.js";
import { RetentionPruner, type RetentionSettings } from "../../src/workers/retention-pruner.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { openTestStore, type TestStore } from "../support/test-store.js";

const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
const quiet = { info: () => {}, warn: (o: unknown) => console.warn(o) };

function logRow(i: number, at: number, userId: number): RequestLogEntry {
  return {
    created_at: at,
    request_id: `req-${at}-${i}`,
    user_id: userId,
    token_id: null,
    channel_id: 1,
    surface: "content",
    model: "m",
    prompt_tokens: 10,
    completion_tokens: 20,
    cached_tokens: 0,
    quota: 7,
    latency_ms: 5,
    status: 200,
    error: null,
  };
}

const count = async (store: Store, table: string, where = sql`true`) =>
  Number(
    (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(store.db)).rows[0]
      ?.n,
  );

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`retention pruner [${kind}]`, () => {
    let opened: TestStore | undefined;
    let store: Store;
    let userId: number;

    beforeAll(async () => {
      opened = await openTestStore(kind, "mg-retention-");
      store = opened.store;
      const user = await store.db
        .insertInto("users")
        .values({
          name: "u",
          group: "default",
          quota: 0,
          status: "enabled",
          webhook_url: null,
          webhook_secret: null,
          created_at: NOW,
          updated_at: NOW,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      userId = Number(user.id);
    });
    afterAll(async () => {
      await opened?.close();
    });

    const settings = (days: Partial<RetentionSettings["days"]>): RetentionSettings => ({
      days: { request_logs: 90, task_events: 90, webhook_deliveries: 30, ...days },
      intervalMs: 60_000,
      batchRows: 3,
      batchPauseMs: 25,
    });

    it("deletes rows past each kind's retention in small batches, keeps newer ones, and never touches the ledger", async () => {
      // Ten request-log rows past 90 days (written as the gateway writes them, totals included),
      // four within them.
      const insert = requestLogInsert(store);
      await insert(Array.from({ length: 10 }, (_, i) => logRow(i, NOW - 120 * DAY + i, userId)));
      await insert(Array.from({ length: 4 }, (_, i) => logRow(i, NOW - 10 * DAY + i, userId)));
      // Task events: five old, two recent (the trigger adds a "created" one now for the task).
      const task = await store.db
        .insertInto("tasks")
        .values({
          task_id: "task_retention",
          platform: "audioa",
          user_id: userId,
          token_id: null,
          channel_id: 1,
          group: "default",
          action: "MUSIC",
          status: "SUCCESS",
          quota: 0,
          fail_reason: "",
          submit_time: NOW,
          start_time: NOW,
          finish_time: NOW,
          progress: "100%",
          properties: "{}",
          data: "{}",
          request_body: "{}",
          next_poll_at: 0,
          created_at: NOW,
          updated_at: NOW,
        } as never)
        .returning("id")
        .executeTakeFirstOrThrow();
      const event = (at: number) => ({ task_id: Number(task.id), at, event: "status", detail: "x" });
      const events = store.db as unknown as import("kysely").Kysely<{ task_events: any }>;
      await events
        .insertInto("task_events")
        .values([...[100, 99, 98, 97, 91].map((d) => event(NOW - d * DAY)), event(NOW - 89 * DAY), event(NOW - DAY)])
        .execute();
      // Webhook deliveries: old ones that ended go, an old pending one stays, a recent one stays.
      const delivery = (n: number, status: string, at: number) => ({
        webhook_id: `msg_${n}`,
        user_id: userId,
        task_id: `task_${n}`,
        url: "http://127.0.0.1:9/hook",
        event: "task.succeeded",
        status,
        next_attempt_at: 0,
        created_at: at,
      });
      await store.db
        .insertInto("webhook_deliveries")
        .values([
          delivery(1, "delivered", NOW - 40 * DAY),
          delivery(2, "failed", NOW - 31 * DAY),
          delivery(3, "pending", NOW - 40 * DAY),
          delivery(4, "delivered", NOW - 5 * DAY),
        ])
        .execute();
      // The ledger: rows far older than any retention.
      await store.db
        .insertInto("ledger")
        .values(
          [200, 150, 1].map((d, i) => ({
            user_id: userId,
            token_id: null,
            kind: "topup",
            amount: 100 * (i + 1),
            reference: `topup-${i}`,
            note: "",
            created_at: NOW - d * DAY,
          })),
        )
        .execute();
      const ledgerBefore = await store.db.selectFrom("ledger").selectAll().orderBy("id").execute();
      const dailyBefore = await store.db.selectFrom("usage_daily").selectAll().orderBy("day").execute();

      const pauses: number[] = [];
      const pruner = new RetentionPruner(
        new RetentionRows(store.db, store.dialect),
        settings({}),
        quiet,
        () => NOW,
        async (ms) => {
          pauses.push(ms);
        },
      );
      const round = await pruner.round();

      expect(await count(store, "request_logs")).toBe(4);
      expect(await count(store, "request_logs", sql`created_at < ${NOW - 90 * DAY}`)).toBe(0);
      // Ten rows in batches of at most three: 3 + 3 + 3 + 1, with a pause after each full one.
      expect(round.deleted.request_logs).toBe(10);
      expect(round.batches.request_logs).toBe(4);
      expect(await count(store, "task_events", sql`at < ${NOW - 90 * DAY}`)).toBe(0);
      expect(await count(store, "task_events", sql`at >= ${NOW - 90 * DAY}`)).toBe(3);
      expect(round.deleted.task_events).toBe(5);
      expect(round.batches.task_events).toBe(2);
      const deliveries = await store.db
        .selectFrom("webhook_deliveries")
        .select("webhook_id")
        .orderBy("webhook_id")
        .execute();
      expect(deliveries.map((d) => d.webhook_id)).toEqual(["msg_3", "msg_4"]);
      expect(pauses).toEqual([25, 25, 25, 25]);
      // The ledger is as it was, and the usage totals still count the pruned rows.
      expect(await store.db.selectFrom("ledger").selectAll().orderBy("id").execute()).toEqual(ledgerBefore);
      expect(await store.db.selectFrom("usage_daily").selectAll().orderBy("day").execute()).toEqual(dailyBefore);
      expect(dailyBefore.reduce((n, r) => n + Number(r.requests), 0)).toBe(14);

      // A second round finds nothing more to do.
      const again = await pruner.round();
      expect(again.deleted).toEqual({});
    });

    it("keeps a kind for ever when its retention is 0", async () => {
      const insert = requestLogInsert(store);
      await insert([logRow(1, NOW - 400 * DAY, userId)]);
      const pruner = new RetentionPruner(
        new RetentionRows(store.db, store.dialect),
        settings({ request_logs: 0 }),
        quiet,
        () => NOW,
        async () => {},
      );
      const round = await pruner.round();
      expect(round.deleted.request_logs).toBeUndefined();
      expect(round.monthsDropped).toEqual([]);
      expect(await count(store, "request_logs", sql`created_at = ${NOW - 400 * DAY}`)).toBe(1);
    });
  });
}
