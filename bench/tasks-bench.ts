/**
 * Audio task benchmark (loopback only, bounded to a few minutes):
 *  1. N tasks in flight at the simulator (default 10,000 per family): seconds until every one is
 *     SUCCESS in the gateway's store, and the upstream calls it took.
 *  2. Batch fetch of 100 distinct ids in a store of 1,000,000 tasks: p50 and p99 latency over
 *     HTTP and the CPU per call; with several sizes, their calls alternate.
 *  3. Submit rate: the compiled gateway, the simulator and the client each in a process of its
 *     own (bench/tasks-submit-load.ts): submits per second and the gateway's CPU per submit.
 *
 *   npm run bench:tasks                       # SQLite
 *   BENCH_DATABASE_URL=postgres://... npm run bench:tasks   # PostgreSQL (a database it may fill)
 *
 * Knobs: BENCH_TASKS (10000), BENCH_FAMILIES (audioa,audiob), BENCH_STORE_ROWS (1000000, or
 * sizes separated by commas),
 * BENCH_FETCHES (1000), BENCH_COMPLETE_MS (180000: longer than the submits take, so every task is
 * in flight at once), BENCH_SKIP (in-flight|fetch|submit), BENCH_SUBMIT_CONNECTIONS (64),
 * BENCH_SUBMIT_SECONDS (10), BENCH_SUBMIT_WARMUP (3), BENCH_SUBMIT_PROFILE (a folder: the gateway's
 * CPU profile of the submit load is written there), BENCH_GATEWAY_ROOT (another checkout whose
 * built gateway the submit load runs, to compare two versions).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { buildGateway, type Gateway } from "../src/app/gateway.js";
import { type ConfigOverrides, loadConfig } from "../src/config/load.js";
import { newTaskId, newTokenKey, sha256Hex, unixNow } from "../src/core/ids.js";
import { startSimulator } from "../src/simulator/server.js";
import { runSubmitLoad } from "./tasks-submit-load.js";

const TASKS = Number(process.env.BENCH_TASKS ?? 10_000);
const FAMILIES = (process.env.BENCH_FAMILIES ?? "audioa,audiob").split(",").filter(Boolean);
/** One size, or several separated by commas: their fetches then alternate (see benchBatchFetch). */
const STORE_SIZES = (process.env.BENCH_STORE_ROWS ?? "1000000").split(",").filter(Boolean).map(Number);
const FETCHES = Number(process.env.BENCH_FETCHES ?? 1000);
const COMPLETE_MS = Number(process.env.BENCH_COMPLETE_MS ?? 180_000);
const SKIP = process.env.BENCH_SKIP ?? "";
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? "";
const ADMIN_KEY = "bench-admin-key-0123456789abcdef";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh store per phase: a SQLite file in `dir`, or a new PostgreSQL database dropped at the end. */
async function freshStore(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!DATABASE_URL) return { url: `sqlite:${path.join(dir, "bench.sqlite")}`, drop: async () => {} };
  const name = `mg_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const run = async (statement: string) => {
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await run(`create database "${name}"`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists "${name}" with (force)`) };
}

async function startGateway(dir: string, overrides: ConfigOverrides = {}) {
  const store = await freshStore(dir);
  const config = loadConfig(
    {},
    {
      port: 0,
      host: "127.0.0.1",
      dataDir: dir,
      databaseUrl: store.url,
      adminKey: ADMIN_KEY,
      logLevel: "error",
      ...overrides,
    },
  );
  const gateway = await buildGateway(config);
  const url = await gateway.listen(0);
  return { gateway, url, dropStore: store.drop };
}

async function admin(url: string, method: string, p: string, body?: unknown) {
  const res = await fetch(`${url}/api/admin${p}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${method} ${p}: ${JSON.stringify(json)}`);
  return json.data;
}

async function newUser(url: string, quota: number) {
  const user = await admin(url, "POST", "/users", { name: `bench-${Math.random().toString(36).slice(2)}`, quota });
  const token = await admin(url, "POST", `/users/${user.id}/tokens`, { name: "bench" });
  return { userId: user.id as number, key: token.key as string };
}

/** Runs `jobs` with at most `width` at once. */
async function pool<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function countByStatus(gateway: Gateway, platform: string) {
  const rows = await gateway.ctx.store.db
    .selectFrom("tasks")
    .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
    .where("platform", "=", platform)
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

async function benchInFlight(family: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-bench-"));
  const sim = await startSimulator({
    seed: 1,
    taskRelay: { completeAfterMs: COMPLETE_MS },
    generateRecord: { completeAfterMs: COMPLETE_MS },
  });
  const { gateway, url, dropStore } = await startGateway(dir, {
    tasks: {
      pollIntervalMs: 1000,
      maxPollIntervalMs: 10_000,
      workerTickMs: 100,
      leaseMs: 30_000,
      timeoutSeconds: 1800,
    },
  });
  try {
    await admin(url, "POST", "/channels", {
      name: "sim",
      type: family === "audioa" ? "task-relay" : "generate-record",
      base_url: sim.url,
      key: "sim-key",
      models: [family],
      settings: { concurrency: family === "audioa" ? 4 : 64 },
    });
    const user = await newUser(url, 10_000_000_000);
    const body = family === "audioa" ? { prompt: "bench song", tags: "edm" } : { prompt: "bench song" };
    const t0 = performance.now();
    await pool(TASKS, 64, async () => {
      const res = await fetch(`${url}/${family}/submit/MUSIC`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`submit: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    });
    const submitted = performance.now();
    const atPeak = await countByStatus(gateway, family);
    const inFlightAtPeak = TASKS - (atPeak.SUCCESS ?? 0) - (atPeak.FAILURE ?? 0);
    // The last task the simulator accepted finishes COMPLETE_MS after its submit.
    const lastDoneAtSim = submitted + COMPLETE_MS;
    let counts: Record<string, number> = {};
    for (;;) {
      counts = await countByStatus(gateway, family);
      if ((counts.SUCCESS ?? 0) + (counts.FAILURE ?? 0) >= TASKS) break;
      if (performance.now() - submitted > COMPLETE_MS + 300_000) throw new Error(`not done: ${JSON.stringify(counts)}`);
      await sleep(100);
    }
    const allDone = performance.now();
    const submits = sim.received.filter((r) => r.method === "POST" && /submit|generate$/.test(r.path)).length;
    const polls = sim.received.length - submits;
    return {
      family,
      tasks: TASKS,
      inFlightAtPeak,
      success: counts.SUCCESS ?? 0,
      failure: counts.FAILURE ?? 0,
      submitSeconds: (submitted - t0) / 1000,
      totalSeconds: (allDone - t0) / 1000,
      lagAfterLastCompletionSeconds: Math.max(0, (allDone - lastDoneAtSim) / 1000),
      upstreamSubmits: submits,
      upstreamPolls: polls,
    };
  } finally {
    await gateway.close();
    await sim.close();
    await dropStore();
    rmSync(dir, { recursive: true, force: true });
  }
}

function clipJson(i: number) {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  return JSON.stringify({
    clips: [
      {
        clip_id: id,
        state: "completed",
        title: "Bench",
        sound: "edm",
        lyrics: "[Verse] la la la",
        image_url: `https://cdn.example/${id}.jpeg`,
        audio_url: `https://cdn.example/${id}.mp3`,
        video_url: null,
        created_at: "2025-01-01T00:00:00.000Z",
        mv: "chirp-v3-5",
        seed: null,
        duration: null,
      },
    ],
  });
}

/** One store filled for the batch fetch: its gateway, the caller's key and the caller's task ids. */
async function fetchStore(rowsWanted: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-bench-"));
  const { gateway, url, dropStore } = await startGateway(dir, { role: "api" });
  const close = async () => {
    await gateway.close();
    await dropStore();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const db = gateway.ctx.store.db;
    const owners: number[] = [];
    const now = unixNow();
    for (let i = 0; i < 100; i++) owners.push(Number((await gateway.ctx.users.create({ name: `owner-${i}` })).id));
    const me = owners[0] as number;
    const key = newTokenKey();
    await db
      .insertInto("tokens")
      .values({
        user_id: me,
        name: "bench",
        key_hash: sha256Hex(key),
        key_prefix: key.slice(0, 8),
        status: "enabled",
        expires_at: null,
        quota_limit: null,
        models: null,
        ip_allow: null,
        created_at: now,
        updated_at: now,
      })
      .execute();

    const mine: string[] = [];
    const t0 = performance.now();
    const CHUNK = 500;
    for (let start = 0; start < rowsWanted; start += 50_000) {
      await db.transaction().execute(async (trx) => {
        for (let s = start; s < Math.min(rowsWanted, start + 50_000); s += CHUNK) {
          const rows = [];
          for (let i = s; i < Math.min(rowsWanted, s + CHUNK); i++) {
            const taskId = newTaskId();
            const owner = owners[i % owners.length] as number;
            if (owner === me) mine.push(taskId);
            rows.push({
              task_id: taskId,
              platform: "audioa",
              user_id: owner,
              token_id: null,
              group: "default",
              channel_id: 1,
              quota: 50_000,
              action: "MUSIC",
              status: "SUCCESS",
              fail_reason: "",
              result_url: "https://cdn.example/x.mp3",
              submit_time: now - 100,
              start_time: now - 90,
              finish_time: now - 10,
              progress: "100%",
              properties: '{"input":"bench","upstream_model_name":"chirp-v3-5","origin_model_name":"chirp-v3-5"}',
              data: clipJson(i),
              request_body: '{"prompt":"bench"}',
              upstream_id: `up-${i}`,
              upstream_status: "SUCCESS",
              next_poll_at: 0,
              lease_owner: null,
              lease_until: 0,
              callback_secret: null,
              created_at: now - 100,
              updated_at: now - 10,
            });
          }
          await trx.insertInto("tasks").values(rows).execute();
        }
      });
    }
    return { rows: rowsWanted, url, key, mine, loadSeconds: (performance.now() - t0) / 1000, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Batch fetch of 100 distinct ids of one owner (all of them when the owner has 100), timed over
 * HTTP one call at a time. With several store sizes (BENCH_STORE_ROWS=10000,1000000) the stores
 * are filled first, then their fetches alternate in blocks of 50 calls, so that every size is
 * measured under the same state of the machine; each size's CPU per call (this process: the
 * gateway and the client, the client's share the same for every size) is taken over its blocks.
 */
async function benchBatchFetch() {
  const stores: Awaited<ReturnType<typeof fetchStore>>[] = [];
  try {
    for (const rows of STORE_SIZES) stores.push(await fetchStore(rows));
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = (mine: string[]) => {
      const ids = new Set<string>();
      while (ids.size < Math.min(100, mine.length)) ids.add(mine[Math.floor(rand() * mine.length)] as string);
      return [...ids];
    };
    const fetchOnce = async (store: (typeof stores)[number]) => {
      const started = performance.now();
      const res = await fetch(`${store.url}/audioa/fetch`, {
        method: "POST",
        headers: { authorization: `Bearer ${store.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ids: pick(store.mine) }),
      });
      const json = (await res.json()) as any;
      if (res.status !== 200 || json.data.length !== Math.min(100, store.mine.length)) {
        throw new Error(`fetch: ${res.status}, ${json?.data?.length} records`);
      }
      return performance.now() - started;
    };
    // The first 50 calls of each store warm caches.
    for (const store of stores) for (let i = 0; i < 50; i++) await fetchOnce(store);
    const latencies = stores.map(() => [] as number[]);
    const cpuMicros = stores.map(() => 0);
    const BLOCK = 50;
    for (let done = 0; done < FETCHES; done += BLOCK) {
      for (const [k, store] of stores.entries()) {
        const cpu = process.cpuUsage();
        for (let i = done; i < Math.min(FETCHES, done + BLOCK); i++) latencies[k]?.push(await fetchOnce(store));
        const used = process.cpuUsage(cpu);
        cpuMicros[k] = (cpuMicros[k] as number) + used.user + used.system;
      }
    }
    return stores.map((store, k) => {
      const sorted = (latencies[k] as number[]).sort((a, b) => a - b);
      return {
        storeRows: store.rows,
        ownedRows: store.mine.length,
        idsPerCall: Math.min(100, store.mine.length),
        loadSeconds: store.loadSeconds,
        fetches: FETCHES,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        cpuUsPerFetch: Math.round((cpuMicros[k] as number) / FETCHES),
        ...(stores.length > 1 ? { alternatedWith: stores.map((s) => s.rows).filter((r) => r !== store.rows) } : {}),
        loadAverage: Math.round((os.loadavg()[0] as number) * 10) / 10,
      };
    });
  } finally {
    for (const store of stores) await store.close();
  }
}

async function main() {
  const store = DATABASE_URL ? "postgres" : "sqlite";
  process.stdout.write(`store: ${store}, node ${process.version}, ${os.cpus().length} cpus\n`);
  if (!SKIP.includes("in-flight")) {
    for (const family of FAMILIES) {
      const r = await benchInFlight(family);
      process.stdout.write(`${JSON.stringify({ bench: "in-flight", store, ...r })}\n`);
    }
  }
  if (!SKIP.includes("fetch")) {
    for (const r of await benchBatchFetch()) {
      process.stdout.write(`${JSON.stringify({ bench: "batch-fetch", store, ...r })}\n`);
    }
  }
  if (!SKIP.includes("submit")) {
    const profileDir = process.env.BENCH_SUBMIT_PROFILE;
    const pgStore = DATABASE_URL ? await freshStore("") : null;
    const r = await runSubmitLoad({
      root: path.resolve(import.meta.dirname, ".."),
      gatewayRoot: process.env.BENCH_GATEWAY_ROOT || undefined,
      databaseUrl: pgStore?.url ?? null,
      connections: Number(process.env.BENCH_SUBMIT_CONNECTIONS ?? 64),
      durationSeconds: Number(process.env.BENCH_SUBMIT_SECONDS ?? 10),
      warmupSeconds: Number(process.env.BENCH_SUBMIT_WARMUP ?? 3),
      gatewayNodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
      keep: Boolean(process.env.BENCH_SUBMIT_KEEP),
    }).finally(() => pgStore?.drop());
    process.stdout.write(`${JSON.stringify({ bench: "submit", store, ...r })}\n`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
