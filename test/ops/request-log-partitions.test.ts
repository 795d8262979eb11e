import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import { listPartitions, monthStart, partitionName } from "../../src/store/request-log-partitions.js";
import { requestLogInsert } from "../../src/store/request-logs.js";
import { RetentionRows } from "../../src/store/retention.js";
import { RetentionPruner } from "../../src/workers/retention-pruner.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
const quiet = { info: () => {}, warn: (o: unknown) => console.warn(o) };

/** Times of rows written before the request log was partitioned: months 7, 5 and 2 back, and now. */
const WRITTEN = [monthStart(NOW, -7) + 3600, monthStart(NOW, -5) + 7200, monthStart(NOW, -2) + DAY, NOW - 60];

function row(at: number, i: number) {
  return {
    created_at: at,
    request_id: `req-${i}`,
    user_id: 1 + (i % 2),
    token_id: null,
    channel_id: i % 3 === 0 ? null : 4,
    surface: "content",
    model: `m-${i % 2}`,
    prompt_tokens: i,
    completion_tokens: 2 * i,
    cached_tokens: 0,
    quota: 100 + i,
    latency_ms: 5,
    status: i % 4 === 0 ? 502 : 200,
    error: null,
  };
}

describe.skipIf(!HAS_PG)("the request log's monthly partitions on PostgreSQL", () => {
  let drop: () => Promise<void>;
  let store: Store;
  const pruner = (now: number) =>
    new RetentionPruner(
      new RetentionRows(store.db, store.dialect),
      {
        days: { request_logs: 90, task_events: 90, webhook_deliveries: 30 },
        intervalMs: 60_000,
        batchRows: 100,
        batchPauseMs: 0,
      },
      quiet,
      () => now,
      async () => {},
    );
  const monthsOf = async () => (await listPartitions(store.db)).map((p) => p.name);
  const partitionOf = async (requestId: string) =>
    (
      await sql<{
        part: string;
      }>`select tableoid::regclass::text as part from request_logs where request_id = ${requestId}`.execute(store.db)
    ).rows[0]?.part;

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    store = openStore(db.url);
    const before = await new Migrator({
      db: store.db,
      provider: { getMigrations: async () => MIGRATIONS },
    }).migrateTo("012_console_indexes");
    expect(before.error).toBeUndefined();
    // Rows written before the upgrade: three per time.
    await store.db
      .insertInto("request_logs")
      .values(WRITTEN.flatMap((at, t) => [0, 1, 2].map((k) => row(at + k, t * 3 + k))))
      .execute();
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it("moves the existing rows into months, fills the usage totals from them and keeps the ids growing", async () => {
    const idsBefore = await store.db.selectFrom("request_logs").select(["id", "request_id"]).orderBy("id").execute();
    await migrateToLatest(store);
    const kind = await sql<{
      kind: string;
    }>`select relkind::text as kind from pg_class where relname = 'request_logs'`.execute(store.db);
    expect(kind.rows[0]?.kind).toBe("p");
    expect(await store.db.selectFrom("request_logs").select(["id", "request_id"]).orderBy("id").execute()).toEqual(
      idsBefore,
    );
    for (const [t, at] of WRITTEN.entries())
      expect(await partitionOf(`req-${t * 3}`)).toBe(partitionName(monthStart(at)));
    const months = await monthsOf();
    for (const ahead of [0, 1, 2]) expect(months).toContain(partitionName(monthStart(NOW, ahead)));
    expect(months).toContain("request_logs_default");

    const totals = await store.db
      .selectFrom("usage_daily")
      .select((eb) => [eb.fn.sum<number>("requests").as("n"), eb.fn.sum<number>("quota").as("q")])
      .executeTakeFirstOrThrow();
    expect(Number(totals.n)).toBe(12);
    expect(Number(totals.q)).toBe(
      WRITTEN.flatMap((_, t) => [0, 1, 2].map((k) => 100 + t * 3 + k)).reduce((a, b) => a + b),
    );

    await requestLogInsert(store)([row(NOW, 99)]);
    const newest = await store.db
      .selectFrom("request_logs")
      .select("id")
      .where("request_id", "=", "req-99")
      .executeTakeFirstOrThrow();
    expect(Number(newest.id)).toBeGreaterThan(Math.max(...idsBefore.map((r) => Number(r.id))));
  });

  it("drops a month whole once all of it is past the retention, and keeps the months after it", async () => {
    const daily = () =>
      store.db
        .selectFrom("usage_daily")
        .selectAll()
        .orderBy("day")
        .orderBy("user_id")
        .orderBy("model")
        .orderBy("channel_id")
        .execute();
    const dailyBefore = await daily();
    const round = await pruner(NOW).round();
    // Every month from 7 back that ends more than 90 days ago (7 and 5 back among them, with their
    // rows); month 2 back does not.
    const past = [-7, -6, -5, -4, -3, -2].filter((m) => monthStart(NOW, m + 1) <= NOW - 90 * DAY);
    expect(past).toEqual(expect.arrayContaining([-7, -5]));
    expect(past).not.toContain(-2);
    expect(round.monthsDropped.sort()).toEqual(past.map((m) => partitionName(monthStart(NOW, m))).sort());
    expect(round.deleted.request_logs).toBeUndefined();
    const months = await monthsOf();
    expect(months).not.toContain(partitionName(monthStart(NOW, -7)));
    expect(months).toContain(partitionName(monthStart(NOW, -2)));
    for (const ahead of [0, 1, 2]) expect(months).toContain(partitionName(monthStart(NOW, ahead)));
    const left = await store.db.selectFrom("request_logs").select("request_id").orderBy("id").execute();
    expect(left.map((r) => r.request_id)).toEqual(["req-6", "req-7", "req-8", "req-9", "req-10", "req-11", "req-99"]);
    // The usage totals are not pruned with the rows.
    expect(await daily()).toEqual(dailyBefore);
  });

  it("creates the coming months ahead of their rows, moving into a new month what the default partition took", async () => {
    // Five months on, with no upkeep meanwhile: that month's rows land in the default partition.
    const later = monthStart(NOW, 5) + 10 * DAY;
    await requestLogInsert(store)([row(later, 100), row(later + 1, 101)]);
    expect(await partitionOf("req-100")).toBe("request_logs_default");

    const round = await pruner(later).round();
    expect(round.monthsCreated).toEqual([5, 6, 7].map((m) => partitionName(monthStart(NOW, m))));
    expect(await partitionOf("req-100")).toBe(partitionName(monthStart(later)));
    expect(await partitionOf("req-101")).toBe(partitionName(monthStart(later)));
    // Every row is still there once, the default partition is empty again.
    expect(
      await store.db
        .selectFrom("request_logs")
        .select("request_id")
        .where("request_id", "in", ["req-100", "req-101"])
        .execute(),
    ).toHaveLength(2);
    const stray = await sql<{ n: number }>`select count(*) as n from request_logs_default`.execute(store.db);
    expect(Number(stray.rows[0]?.n)).toBe(0);
    // Months now wholly past that month's retention went too.
    expect(round.monthsDropped).toContain(partitionName(monthStart(NOW, -2)));
  });
});
