/**
 * The console's and the admin API's reads at 10,000,000 request-log rows, on SQLite and on
 * PostgreSQL: the request log browser (first page, keyset pages further on, each filter), the
 * overview's charts (the last hour to the last 30 days), a user's spend, the usage totals and the
 * channels' latency, each through the store function its route calls. Prints p50 and p99 per
 * query (milliseconds), then what a flush of the request log (its rows and their usage totals) and
 * one batch of the pruner cost at that size.
 *
 * The rows are made by the store itself in large statements (a recursive select on SQLite,
 * generate_series on PostgreSQL), indexes built after them and the usage totals filled from them
 * as migration 013 fills them: 90 days of traffic ending now, 1,000 users each on three of 20
 * models, 10 channels, 2% errors. A filled store is kept (`--keep`) and used again by the next run
 * of the same size.
 *
 * Usage: node --import tsx bench/request-log-scale.ts [--rows 10000000] [--stores sqlite,postgres]
 *        [--iterations 200] [--keep] [--dir /tmp/request-log-scale]
 *        (PostgreSQL: BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; the
 *        bench makes and fills a database of its own there)
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import type { SeriesBy } from "../src/core/usage-series.js";
import { ConsoleReads } from "../src/store/console-reads.js";
import { openStore, type Store } from "../src/store/database.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { operatorListsOf } from "../src/store/operator-lists.js";
import { dropPartitionsBefore, ensureMonthPartitions, monthStart } from "../src/store/request-log-partitions.js";
import { requestLogInsert } from "../src/store/request-logs.js";
import { RetentionRows } from "../src/store/retention.js";
import { backfillUsageTotals } from "../src/store/usage-aggregates.js";
import type { UsageBy } from "../src/store/usage-totals.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "10000000" },
    stores: { type: "string", default: "sqlite,postgres" },
    iterations: { type: "string", default: "200" },
    keep: { type: "boolean", default: false },
    dir: { type: "string", default: path.join(os.tmpdir(), "request-log-scale") },
  },
});
const ROWS = Number(values.rows);
const ITERATIONS = Number(values.iterations);
const STORES = values.stores.split(",").filter(Boolean);
const PG_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const DAYS = 90;
const USERS = 1000;
const MODELS = 20;
const CHANNELS = 10;
const CHUNK = 1_000_000;
/** The pruner's default batch (RETENTION_BATCH_ROWS), and how many of them are timed. */
const PRUNE_BATCH = 100;
const PRUNE_BATCHES = 100;
/** Flushes of the request log timed. */
const FLUSHES = 50;
const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
const START = NOW - DAYS * DAY;

/** The indexes of the request log (migrations 001 and 012), dropped while it fills. */
const LOG_INDEXES: [string, string[]][] = [
  ["request_logs_user_idx", ["user_id", "id"]],
  ["request_logs_time_idx", ["created_at"]],
  ["request_logs_user_time_idx", ["user_id", "created_at"]],
  ["request_logs_channel_idx", ["channel_id", "id"]],
  ["request_logs_model_idx", ["model", "id"]],
  ["request_logs_status_idx", ["status", "id"]],
];

/**
 * The columns of row `i` (1..ROWS) as SQL expressions over `i`, the same on both stores: times in
 * id order across the 90 days; user i spread over USERS; each user on three models; a model on
 * its channel, one call in ten on the next one; 2% of calls 502 and 1% 429.
 */
function rowSelect(): string {
  const user = `(1 + ((i * 7919) % ${USERS}))`;
  const model = `((${user} * 3 + (i % 3)) % ${MODELS})`;
  return `select
    ${START} + (i * ${DAYS * DAY}) / ${ROWS},
    'req-' || i,
    ${user},
    ${user},
    1 + ((${model} + case when i % 10 = 0 then 1 else 0 end) % ${CHANNELS}),
    case ${model} % 3 when 0 then 'content' when 1 then 'chat' else 'images' end,
    'model-' || ${model},
    (i * 37) % 4000,
    (i * 11) % 1000,
    (i * 13) % 500,
    (i * 31) % 20000,
    50 + (i * 17) % 3000,
    case when i % 50 = 0 then 502 when i % 100 = 1 then 429 else 200 end,
    case when i % 50 = 0 then 'upstream failed' else null end`;
}

const INSERT_COLUMNS =
  "created_at, request_id, user_id, token_id, channel_id, surface, model, prompt_tokens, completion_tokens, " +
  "cached_tokens, quota, latency_ms, status, error";

const log = (line: string) => process.stdout.write(`${line}\n`);

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  log(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

async function rowCount(store: Store): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from request_logs`.execute(store.db);
  return Number(rows[0]?.n ?? 0);
}

async function fill(store: Store): Promise<void> {
  log(`filling ${ROWS.toLocaleString("en")} rows (${store.dialect})`);
  for (const [name] of LOG_INDEXES) await store.db.schema.dropIndex(name).ifExists().execute();
  if (store.dialect === "postgres") await ensureMonthPartitions(store.db, START, NOW);
  await timed("rows", async () => {
    for (let from = 1; from <= ROWS; from += CHUNK) {
      const to = Math.min(ROWS, from + CHUNK - 1);
      const statement =
        store.dialect === "postgres"
          ? `insert into request_logs (${INSERT_COLUMNS}) ${rowSelect()} from generate_series(${from}::bigint, ${to}::bigint) as g(i)`
          : `with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to})
             insert into request_logs (${INSERT_COLUMNS}) ${rowSelect()} from n`;
      await sql.raw(statement).execute(store.db);
    }
  });
  await timed("indexes", async () => {
    for (const [name, columns] of LOG_INDEXES) {
      await store.db.schema.createIndex(name).on("request_logs").columns(columns).execute();
    }
  });
  await timed("usage totals", () => backfillUsageTotals(store.db));
  await timed("statistics", async () => {
    if (store.dialect === "postgres") await sql`vacuum analyze`.execute(store.db);
    else await sql`analyze`.execute(store.db);
  });
}

/** A store of ROWS rows: the kept one when it has them, else a fresh one filled. */
async function storeOf(kind: string): Promise<{ store: Store; close(): Promise<void> }> {
  mkdirSync(values.dir, { recursive: true });
  let url: string;
  let dropDb: (() => Promise<void>) | null = null;
  if (kind === "postgres") {
    const name = `mg_bench_request_log_${ROWS}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const exists = await admin.query("select 1 from pg_database where datname = $1", [name]);
    if (exists.rowCount === 0) await admin.query(`create database "${name}"`);
    await admin.end();
    const u = new URL(PG_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    };
  } else {
    url = `sqlite:${path.join(values.dir, `request-log-${ROWS}.sqlite`)}`;
  }
  let store = openStore(url);
  await migrateToLatest(store);
  if ((await rowCount(store)) !== ROWS) {
    if (kind === "postgres") {
      await sql`truncate request_logs, usage_daily, usage_daily_users, usage_hourly`.execute(store.db);
    } else {
      await store.close();
      const file = url.slice("sqlite:".length);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) rmSync(f);
      store = openStore(url);
      await migrateToLatest(store);
    }
    await fill(store);
  }
  return {
    store,
    async close() {
      await store.close();
      if (!values.keep) {
        if (dropDb) await dropDb();
        else rmSync(values.dir, { recursive: true, force: true });
      }
    },
  };
}

// A small deterministic generator: the same choices on both stores.
let seed = 42;
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
}
const pick = (n: number) => Math.floor(random() * n);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number;
}

/** The overview's range as its route draws it: the last `minutes`, in buckets of `bucket` s. */
function overviewRange(minutes: number, bucket: number) {
  const to = (Math.floor(NOW / bucket) + 1) * bucket;
  const from = to - Math.ceil((minutes * 60) / bucket) * bucket;
  return { fromMs: from * 1000, toMs: to * 1000, bucketMs: bucket * 1000 };
}

async function bench(kind: string): Promise<void> {
  const { store, close } = await storeOf(kind);
  const lists = operatorListsOf(store.db);
  const reads = new ConsoleReads(store.db);
  const { rows } = await sql<{ lo: number; hi: number }>`select min(id) as lo, max(id) as hi from request_logs`.execute(
    store.db,
  );
  const lo = Number(rows[0]?.lo);
  const hi = Number(rows[0]?.hi);
  const someId = () => lo + pick(hi - lo);
  const user = () => 1 + pick(USERS);
  const model = () => `model-${pick(MODELS)}`;
  const today = NOW - (NOW % DAY);
  const usage = (by: UsageBy, extra: { userId?: number; model?: string } = {}) =>
    lists.usage({ fromDay: today - 29 * DAY, toDay: today + DAY, by, limit: 100, ...extra });
  const overview = (minutes: number, bucket: number, by: SeriesBy) =>
    lists.series({ ...overviewRange(minutes, bucket), by });

  const queries: [string, () => Promise<unknown>][] = [
    ["logs: first page", () => lists.requestLogs({ limit: 50 })],
    ["logs: a page further on (keyset)", () => lists.requestLogs({ limit: 50, after: someId() })],
    ["logs: user, first page", () => lists.requestLogs({ limit: 50, userId: user() })],
    ["logs: user, a page further on", () => lists.requestLogs({ limit: 50, userId: user(), after: someId() })],
    ["logs: model, first page", () => lists.requestLogs({ limit: 50, model: model() })],
    ["logs: model, a page further on", () => lists.requestLogs({ limit: 50, model: model(), after: someId() })],
    ["logs: channel, first page", () => lists.requestLogs({ limit: 50, channelId: 1 + pick(CHANNELS) })],
    ["logs: status 502, first page", () => lists.requestLogs({ limit: 50, status: 502 })],
    [
      "logs: user and model, first page",
      () => {
        const u = user();
        return lists.requestLogs({ limit: 50, userId: u, model: `model-${(u * 3 + pick(3)) % MODELS}` });
      },
    ],
    ["overview: last hour, 60 s buckets (rows)", () => overview(60, 60, "model")],
    ["overview: last 6 hours, 300 s buckets (rows)", () => overview(360, 300, "model")],
    ["overview: last day, hourly (totals)", () => overview(1440, 3600, "model")],
    ["overview: 7 days, 6 h buckets (totals)", () => overview(10_080, 21_600, "model")],
    ["overview: 30 days, daily (totals)", () => overview(43_200, 86_400, "channel")],
    ["me/spend: 7 days (totals)", () => reads.spend(user(), today - 6 * DAY)],
    ["me/spend: 30 days (totals)", () => reads.spend(user(), today - 29 * DAY)],
    ["usage: 30 days by user, top 100", () => usage("user")],
    ["usage: 30 days, users of one model, top 100", () => usage("user", { model: model() })],
    ["usage: 30 days by model", () => usage("model")],
    ["usage: 30 days of one user by day", () => usage("day", { userId: user() })],
    ["usage: 30 days of one model by day", () => usage("day", { model: model() })],
    ["channels: latency p50 of 10 channels", () => lists.latencyP50(Array.from({ length: CHANNELS }, (_, i) => i + 1))],
  ];

  log(`\n${kind}: ${ROWS.toLocaleString("en")} request-log rows, ${ITERATIONS} runs of each query (ms)`);
  log(`| query | p50 | p99 |`);
  log(`|---|---:|---:|`);
  for (const [name, run] of queries) {
    for (let i = 0; i < 3; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    log(`| ${name} | ${percentile(times, 0.5).toFixed(2)} | ${percentile(times, 0.99).toFixed(2)} |`);
  }

  // The request log's flush at this size: 500 rows of a day after the fill's last (the next day's
  // totals are new keys at first, then added to), through the store's own insert; then those rows
  // and their totals are taken out again.
  const insert = requestLogInsert(store);
  const flushTimes: number[] = [];
  for (let f = 0; f < FLUSHES; f++) {
    const rows = Array.from({ length: 500 }, (_, k) => {
      const u = 1 + pick(USERS);
      const m = (u * 3 + pick(3)) % MODELS;
      return {
        created_at: NOW + DAY + f,
        request_id: `flush-${f}-${k}`,
        user_id: u,
        token_id: u,
        channel_id: 1 + (m % CHANNELS),
        surface: ["content", "chat", "images"][m % 3] as string,
        model: `model-${m}`,
        prompt_tokens: 100,
        completion_tokens: 50,
        cached_tokens: 0,
        quota: 1000,
        latency_ms: 100,
        status: 200,
        error: null,
      };
    });
    const t0 = performance.now();
    await insert(rows);
    flushTimes.push(performance.now() - t0);
  }
  flushTimes.sort((a, b) => a - b);
  log(
    `| request log: a flush of 500 rows and their totals | ${percentile(flushTimes, 0.5).toFixed(2)} | ${percentile(flushTimes, 0.99).toFixed(2)} |`,
  );
  await sql`delete from request_logs where created_at > ${sql.lit(NOW)}`.execute(store.db);
  for (const [table, column] of [
    ["usage_daily", "day"],
    ["usage_daily_users", "day"],
    ["usage_hourly", "hour"],
  ]) {
    await sql`delete from ${sql.table(table as string)} where ${sql.ref(column as string)} > ${sql.lit(NOW)}`.execute(
      store.db,
    );
  }

  // The pruner at this size, leaving the store as it was filled. SQLite: 100 batches of its default
  // size (the oldest rows, written again after: their totals were never taken off). PostgreSQL: the oldest month dropped whole, in a
  // transaction rolled back.
  if (store.dialect === "sqlite") {
    const retention = new RetentionRows(store.db, store.dialect);
    const times: number[] = [];
    let deleted = 0;
    for (let i = 0; i < PRUNE_BATCHES; i++) {
      const t0 = performance.now();
      deleted += await retention.pruneBatch("request_logs", START + DAY, PRUNE_BATCH);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    log(
      `| pruner: one batch of ${PRUNE_BATCH} rows (its default) | ${percentile(times, 0.5).toFixed(2)} | ${percentile(times, 0.99).toFixed(2)} |`,
    );
    await sql
      .raw(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${deleted})
        insert into request_logs (${INSERT_COLUMNS}) ${rowSelect()} from n`)
      .execute(store.db);
  } else {
    const rollback = new Error("rolled back");
    await store.db
      .transaction()
      .execute(async (trx) => {
        const t0 = performance.now();
        const dropped = await dropPartitionsBefore(trx, monthStart(START, 1));
        log(`pruner: ${dropped.join(", ")} dropped whole in ${(performance.now() - t0).toFixed(1)} ms`);
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
  }
  await close();
}

for (const kind of STORES) await bench(kind);
