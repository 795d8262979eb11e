import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/database.js";
import { TASK_EVENTS_PER_TASK } from "../../src/store/migrations/012_console_indexes.js";
import { taskHistory } from "../../src/store/task-events.js";
import { spendSeries } from "../../src/store/usage-series.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { openTestStore, type TestStore } from "../support/test-store.js";

const T0 = 1_800_000_000; // a whole minute

function taskRow(i: number, userId: number, over: Record<string, unknown> = {}) {
  return {
    task_id: `t-${i}`,
    platform: i % 2 === 0 ? "audioa" : "audiob",
    user_id: userId,
    token_id: null,
    group: "default",
    channel_id: (i % 7) + 1,
    quota: 10,
    action: "MUSIC",
    status: "SUCCESS",
    submit_time: T0,
    properties: JSON.stringify({ input: "", upstream_model_name: "m", origin_model_name: `model-${i % 2}` }),
    request_body: "{}",
    data: "{}",
    fail_reason: "",
    result_url: null,
    start_time: 0,
    finish_time: 0,
    progress: "0%",
    upstream_id: null,
    upstream_status: null,
    next_poll_at: 0,
    lease_owner: null,
    lease_until: 0,
    callback_secret: null,
    callback_url: null,
    created_at: T0 + i,
    updated_at: T0 + i,
    ...over,
  };
}

function logRow(at: number, userId: number, over: Record<string, unknown> = {}) {
  return {
    created_at: at,
    request_id: `r-${at}-${Math.random()}`,
    user_id: userId,
    token_id: null,
    channel_id: 3,
    surface: "images",
    model: "img-1",
    prompt_tokens: 0,
    completion_tokens: 1,
    cached_tokens: 0,
    quota: 5,
    latency_ms: 100,
    status: 200,
    error: null,
    ...over,
  };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`console store queries [${kind}]`, () => {
    let opened: TestStore | undefined;
    let store: Store;
    let alice: number;
    let bob: number;

    beforeAll(async () => {
      opened = await openTestStore(kind, "mg-ops-store-");
      store = opened.store;
      const user = (name: string) => ({
        name,
        group: "default",
        quota: 1000,
        status: "enabled",
        webhook_url: null,
        webhook_secret: null,
        created_at: T0,
        updated_at: T0,
      });
      alice = Number(
        (await store.db.insertInto("users").values(user("alice")).returning("id").executeTakeFirstOrThrow()).id,
      );
      bob = Number(
        (await store.db.insertInto("users").values(user("bob")).returning("id").executeTakeFirstOrThrow()).id,
      );
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("buckets requests, errors and spend of the request log and of tasks, for one user or all", async () => {
      await store.db
        .insertInto("request_logs")
        .values([
          logRow(T0 + 5, alice),
          logRow(T0 + 65, alice, { status: 502, quota: 0, model: "img-2", channel_id: 4 }),
          logRow(T0 + 70, bob, { quota: 7 }),
          logRow(T0 - 1, alice), // before the range
          logRow(T0 + 180, alice), // after it
        ])
        .execute();
      await store.db
        .insertInto("tasks")
        .values([taskRow(1, alice), taskRow(2, alice, { status: "FAILURE", created_at: T0 + 61 }), taskRow(3, bob)])
        .execute();

      const all = await spendSeries(store.db, {
        fromMs: T0 * 1000,
        toMs: (T0 + 180) * 1000,
        bucketMs: 60_000,
        by: "model",
      });
      expect(all.map((b) => b.start)).toEqual([T0, T0 + 60, T0 + 120]);
      expect(all.map((b) => [b.requests, b.errors, b.spend])).toEqual([
        [3, 0, 25], // alice image 5 + alice task 10 + bob task 10
        [3, 2, 7], // alice failed image 0, alice failed task (refunded), bob image 7
        [0, 0, 0],
      ]);
      expect(all[0]?.series).toEqual({
        "img-1": { requests: 1, errors: 0, spend: 5 },
        "model-1": { requests: 2, errors: 0, spend: 20 },
      });

      const mine = await spendSeries(store.db, {
        userId: alice,
        fromMs: T0 * 1000,
        toMs: (T0 + 120) * 1000,
        bucketMs: 60_000,
        by: "channel",
      });
      expect(mine.map((b) => b.series)).toEqual([
        { "2": { requests: 1, errors: 0, spend: 10 }, "3": { requests: 1, errors: 0, spend: 5 } },
        { "3": { requests: 1, errors: 1, spend: 0 }, "4": { requests: 1, errors: 1, spend: 0 } },
      ]);
      const surfaces = await spendSeries(store.db, {
        userId: bob,
        fromMs: T0 * 1000,
        toMs: (T0 + 120) * 1000,
        bucketMs: 120_000,
        by: "surface",
      });
      expect(surfaces[0]?.series).toEqual({
        audiob: { requests: 1, errors: 0, spend: 10 },
        images: { requests: 1, errors: 0, spend: 7 },
      });
    });

    it("refuses more than 500 buckets and an empty range", async () => {
      await expect(spendSeries(store.db, { fromMs: 0, toMs: 501_000, bucketMs: 1000, by: "model" })).rejects.toThrow(
        /at most 500/,
      );
      await expect(spendSeries(store.db, { fromMs: 5000, toMs: 5000, bucketMs: 1000, by: "model" })).rejects.toThrow(
        /end after/,
      );
    });

    it("records a task's moves, channel switches and failed polls as its history", async () => {
      const row = await store.db
        .insertInto("tasks")
        .values(taskRow(100, alice, { status: "NOT_START", task_id: "hist-1" }))
        .returning("id")
        .executeTakeFirstOrThrow();
      const id = Number(row.id);
      const db = store.db;
      await db.updateTable("tasks").set({ channel_id: 9 }).where("id", "=", id).execute();
      await db.updateTable("tasks").set({ status: "SUBMITTED", upstream_id: "up-1" }).where("id", "=", id).execute();
      await db.updateTable("tasks").set({ poll_errors: sql`poll_errors + 1` }).where("id", "=", id).execute();
      await db.updateTable("tasks").set({ next_poll_at: 5 }).where("id", "=", id).execute(); // no event
      await db
        .updateTable("tasks")
        .set({ status: "FAILURE", fail_reason: "upstream said no" })
        .where("id", "=", id)
        .execute();
      const history = await taskHistory(db, id);
      expect(history.map((h) => [h.event, h.detail])).toEqual([
        ["created", "on channel 3"],
        ["channel", "channel 3 -> 9"],
        ["status", "NOT_START -> SUBMITTED, upstream id up-1"],
        ["poll_failed", "poll failed (1 in a row)"],
        ["status", "SUBMITTED -> FAILURE: upstream said no"],
      ]);
      expect(history.every((h) => h.at > 1_700_000_000)).toBe(true);
    });

    it("keeps at most 100 events a task, whatever keeps failing", async () => {
      const row = await store.db
        .insertInto("tasks")
        .values(taskRow(101, alice, { status: "SUBMITTED", task_id: "hist-2" }))
        .returning("id")
        .executeTakeFirstOrThrow();
      for (let n = 0; n < 110; n++) {
        await store.db
          .updateTable("tasks")
          .set({ poll_errors: sql`poll_errors + 1` })
          .where("id", "=", Number(row.id))
          .execute();
      }
      const history = await taskHistory(store.db, Number(row.id));
      expect(history).toHaveLength(TASK_EVENTS_PER_TASK);
      expect(history.at(-1)?.detail).toBe(`poll failed (${TASK_EVENTS_PER_TASK - 1} in a row)`);
    });
  });
}
