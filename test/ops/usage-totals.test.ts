import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/database.js";
import { type RequestLogEntry, RequestLogWriter, requestLogInsert } from "../../src/store/request-logs.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { openTestStore, type TestStore } from "../support/test-store.js";

const T0 = 1_800_000_000 - (1_800_000_000 % 86_400); // a UTC day's start

/** A row as a request writes it; `refused` ones break a NOT NULL column, so the store refuses them. */
const rowArb = fc.record({
  at: fc.integer({ min: 0, max: 3 * 86_400 - 1 }),
  user: fc.constantFrom(1, 2, 3, null),
  channel: fc.constantFrom(1, 2, null),
  model: fc.constantFrom("m-a", "m-b", "m-c"),
  surface: fc.constantFrom("content", "chat", "images"),
  status: fc.constantFrom(200, 200, 200, 400, 429, 500, 502),
  quota: fc.integer({ min: 0, max: 1_000_000 }),
  prompt: fc.integer({ min: 0, max: 100_000 }),
  completion: fc.integer({ min: 0, max: 100_000 }),
  cached: fc.integer({ min: 0, max: 1_000 }),
  refused: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
});

type RowDraw = typeof rowArb extends fc.Arbitrary<infer R> ? R : never;

let serial = 0;
function entry(r: RowDraw): RequestLogEntry {
  serial += 1;
  return {
    created_at: T0 + r.at,
    request_id: `req-${serial}`,
    user_id: r.user,
    token_id: null,
    channel_id: r.channel,
    surface: r.refused ? (null as unknown as string) : r.surface,
    model: r.model,
    prompt_tokens: r.prompt,
    completion_tokens: r.completion,
    cached_tokens: r.cached,
    quota: r.quota,
    latency_ms: 1,
    status: r.status,
    error: null,
  };
}

type Totals = Record<string, [number, number, number, number, number, number]>;

/** The totals recomputed here from every row the request log holds, per day and per hour. */
async function recomputed(store: Store): Promise<{ daily: Totals; users: Totals; hourly: Totals }> {
  const rows = await store.db.selectFrom("request_logs").selectAll().execute();
  const daily: Totals = {};
  const users: Totals = {};
  const hourly: Totals = {};
  for (const r of rows) {
    const at = Number(r.created_at);
    const day = `${at - (at % 86_400)}|${r.user_id ?? 0}|${r.model}|${r.channel_id ?? 0}|${r.surface}`;
    const user = `${at - (at % 86_400)}|${r.user_id ?? 0}`;
    const hour = `${at - (at % 3_600)}|${r.model}|${r.channel_id ?? 0}|${r.surface}`;
    for (const [totals, key] of [
      [daily, day],
      [users, user],
      [hourly, hour],
    ] as const) {
      totals[key] ??= [0, 0, 0, 0, 0, 0];
      const t = totals[key];
      t[0] += 1;
      t[1] += Number(r.status) >= 400 ? 1 : 0;
      t[2] += Number(r.quota);
      t[3] += Number(r.prompt_tokens);
      t[4] += Number(r.completion_tokens);
      t[5] += Number(r.cached_tokens);
    }
  }
  return { daily, users, hourly };
}

/** The totals as the store keeps them. */
async function kept(store: Store): Promise<{ daily: Totals; users: Totals; hourly: Totals }> {
  const counters = (r: Record<string, unknown>) =>
    ["requests", "errors", "quota", "prompt_tokens", "completion_tokens", "cached_tokens"].map((c) => Number(r[c])) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
  const daily: Totals = {};
  for (const r of await store.db.selectFrom("usage_daily").selectAll().execute()) {
    daily[`${r.day}|${r.user_id}|${r.model}|${r.channel_id}|${r.surface}`] = counters(r);
  }
  const users: Totals = {};
  for (const r of await store.db.selectFrom("usage_daily_users").selectAll().execute()) {
    users[`${r.day}|${r.user_id}`] = counters(r);
  }
  const hourly: Totals = {};
  for (const r of await store.db.selectFrom("usage_hourly").selectAll().execute()) {
    hourly[`${r.hour}|${r.model}|${r.channel_id}|${r.surface}`] = counters(r);
  }
  return { daily, users, hourly };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`usage totals [${kind}]`, () => {
    let opened: TestStore | undefined;
    let store: Store;

    beforeAll(async () => {
      opened = await openTestStore(kind, "mg-usage-");
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("equal a recomputation from the rows after any mix of batches, concurrent writers and refused rows", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(rowArb, { maxLength: 60 }),
          fc.integer({ min: 1, max: 25 }),
          async (rows, maxBatch) => {
            // Two writers at once, as two instances would write; on SQLite the second one writes
            // through the query builder (a store without its group commit).
            const refused: unknown[] = [];
            const writers = [store, { db: store.db, dialect: store.dialect } as Store].map(
              (target) =>
                new RequestLogWriter(requestLogInsert(target), (err) => refused.push(err), {
                  intervalMs: 1_000_000,
                  maxBatch,
                  maxQueue: 100_000,
                }),
            );
            for (const [i, r] of rows.entries()) writers[i % 2]?.log(entry(r));
            await Promise.all(writers.map((w) => w.flush()));
            expect(refused).toHaveLength(rows.filter((r) => r.refused).length);
            const [want, have] = await Promise.all([recomputed(store), kept(store)]);
            expect(have).toEqual(want);
          },
        ),
        { numRuns: kind === "postgres" ? 15 : 30 },
      );
      // The property ran over rows of every kind, refused ones included.
      const { daily } = await kept(store);
      expect(Object.keys(daily).length).toBeGreaterThan(20);
    });
  });
}
