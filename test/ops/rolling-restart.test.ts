import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunPrices, usageQuota } from "../../scripts/reliability/money-checks.js";
import {
  type Child,
  freePort,
  gatewayReady,
  startChild,
  stopChild,
  waitReady,
} from "../../scripts/reliability/processes.js";
import { buildGateway } from "../../src/app/gateway.js";
import { loadConfig } from "../../src/config/load.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { HAPROXY, type HaproxyProcess, loopbackConfig, startHaproxy } from "../support/haproxy.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";
import { type Restartable, restartEach } from "../support/rolling-restart.js";
import { type LoadCall, startSteadyLoad } from "../support/steady-load.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN_KEY = "rolling-restart-admin-key-0123456789";
const UPSTREAM_KEY = "sim-upstream-key";
const MODEL = "gemini-2.5-flash";
/** The price the test sets, written down here rather than read back: the billing check's source. */
const PRICES: RunPrices = {
  quotaPerUnit: 500_000,
  perCall: {},
  tokens: { [MODEL]: { input: 0.3, output: 2.5, cachedRatio: 0.1 } },
};
const INITIAL_QUOTA = 1_000_000_000;
/**
 * The balancer checks every 100 ms (fall 2: out within about 0.2 s), so a readiness delay of two
 * seconds leaves it ample time, even on a busy machine; streams of 6 chunks (1.2 s) end well
 * inside the drain window.
 */
const CHECK_INTERVAL = "100ms";
const SHUTDOWN_DELAY_MS = 2000;
const SHUTDOWN_GRACE_MS = 5000;
const STREAM_CHUNKS = 6;

const skipReason = !HAS_PG
  ? "TEST_DATABASE_URL is not set (two instances share one PostgreSQL database)"
  : !HAPROXY
    ? "haproxy is not installed (apt-get install haproxy)"
    : null;
if (skipReason) process.stderr.write(`\n[media-gateway tests] the rolling-restart test is skipped: ${skipReason}\n`);

describe.skipIf(skipReason !== null)("a rolling restart behind HAProxy (deploy/haproxy.cfg)", () => {
  let dir: string;
  let db: { url: string; drop(): Promise<void> };
  let sim: Simulator;
  let key: string;
  let userId: number;
  let balancer: HaproxyProcess | null = null;
  const gateways: Child[] = [];
  const started: Child[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-rolling-"));
    db = await createTestDatabase();
    sim = await startSimulator({ keys: [UPSTREAM_KEY] });
    // The store is made (migrated) and seeded once, before either instance starts.
    const config = loadConfig({}, { dataDir: dir, databaseUrl: db.url, adminKey: ADMIN_KEY, logLevel: "silent" });
    const gateway = await buildGateway(config);
    const { ctx } = gateway;
    await ctx.prices.setPrice({
      kind: "content",
      name: MODEL,
      inputPerMillion: PRICES.tokens[MODEL]?.input,
      outputPerMillion: PRICES.tokens[MODEL]?.output,
      cachedRatio: PRICES.tokens[MODEL]?.cachedRatio,
    });
    const user = await ctx.users.create({ name: "steady" });
    userId = Number(user.id);
    await ctx.ledger.topUp(userId, INITIAL_QUOTA, "topup:steady", "test quota");
    key = (await ctx.tokens.create({ userId, name: "steady" })).key;
    await ctx.channels.create({
      name: "content",
      type: "gemini",
      baseUrl: sim.url,
      key: UPSTREAM_KEY,
      models: [MODEL],
    });
    await gateway.close(0);
  });

  afterAll(async () => {
    // Every process this test started, by its PID, also when the test failed half-way.
    await balancer?.stop();
    await Promise.all(started.map((child) => stopChild(child, 5000)));
    await sim?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `node dist/main.js serve` (as the image runs it), on its own port and data folder. */
  async function startGateway(i: number, port: number, run: number): Promise<Child> {
    const child = startChild(`gateway-${i + 1}`, port, ["serve"], {
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: mkdtempSync(path.join(dir, `gateway-${i + 1}-`)),
      DATABASE_URL: db.url,
      REDIS_URL: "",
      CONFIG_FILE: "",
      ROLE: "all",
      ADMIN_KEY,
      LOG_LEVEL: "warn",
      TRUST_PROXY: "1",
      // A name per run, so that each charge says which run of which instance opened it.
      INSTANCE_NAME: `gateway-${i + 1}-run-${run}`,
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
    });
    started.push(child);
    await waitReady(child, () => gatewayReady(child.url), 60_000);
    gateways[i] = child;
    return child;
  }

  it("answers every request of a steady load while each instance is restarted in turn, and bills each call for what it delivered", async () => {
    const ports = [await freePort(), await freePort()];
    await Promise.all(ports.map((port, i) => startGateway(i, port, 1)));
    const lbPort = await freePort();
    const config = loopbackConfig(readFileSync(path.join(ROOT, "deploy/haproxy.cfg"), "utf8"), {
      port: lbPort,
      servers: { "gateway-1": ports[0] as number, "gateway-2": ports[1] as number },
      checkInterval: CHECK_INTERVAL,
    });
    balancer = await startHaproxy(config, dir, lbPort);
    const lb = balancer;

    const load = startSteadyLoad({
      url: lb.url,
      key,
      model: MODEL,
      clients: 4,
      streams: 3,
      streamChunks: STREAM_CHUNKS,
      prefix: "rr",
    });
    let calls: LoadCall[];
    let records: Awaited<ReturnType<typeof restartEach>>;
    try {
      // Load on both instances first, then each restarted in turn.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const instances: Restartable[] = [0, 1].map((i) => ({
        name: `gateway-${i + 1}`,
        stop: async () => {
          const child = gateways[i] as Child;
          child.proc.kill("SIGTERM");
          return child.exited;
        },
        start: async () => {
          await startGateway(i, ports[i] as number, 2);
        },
      }));
      records = await restartEach(instances, lb);
      // The restarted instances take their share before the load ends.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      calls = await load.stop();
    }

    const failed = calls.filter((c) => c.failure !== null).map((c) => `${c.id}: ${c.failure}`);
    expect(failed, `HAProxy's last lines:\n${lb.lines.slice(-30).join("\n")}`).toEqual([]);
    for (const r of records) {
      expect(r.exitCode, r.name).toBe(0);
      // The balancer took the instance out while it still served: /readyz failed before the listener closed.
      expect(r.takenOutBeforeExit, r.name).toBe(true);
    }
    const streams = calls.filter((c) => c.kind === "stream");
    expect(streams.length).toBeGreaterThan(6);
    expect(calls.filter((c) => c.kind === "content").length).toBeGreaterThan(20);

    // The money, once every gateway has stopped (their request logs are written by then).
    await lb.stop();
    await Promise.all(gateways.map((child) => stopChild(child, 10_000)));
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const logs = await client.query<{ request_id: string; status: number; quota: string }>(
        "select request_id, status, quota from request_logs where user_id = $1",
        [userId],
      );
      const logOf = new Map<string, Array<{ status: number; quota: number }>>();
      for (const row of logs.rows) {
        logOf.set(row.request_id, [...(logOf.get(row.request_id) ?? []), { ...row, quota: Number(row.quota) }]);
      }
      // Each content call and stream is logged once, billed the price of the usage its client
      // received: a whole answer's, or for a stream cut short, what it delivered before the cut.
      const billed = calls.filter((c) => c.kind !== "models");
      const expected = billed.map((c) => ({
        id: c.id,
        quota: c.lastUsage ? usageQuota(PRICES, MODEL, c.lastUsage, 1) : 0,
      }));
      const actual = billed.map((c) => {
        const rows = logOf.get(c.id) ?? [];
        return { id: c.id, quota: rows.length === 1 ? rows[0]?.quota : rows };
      });
      expect(actual).toEqual(expected);

      // The ledger agrees: one charge a call, none left open, the balance moved by their sum.
      const charges = await client.query<{ state: string; settled: string | null; instance: string }>(
        "select state, settled, instance from charges where user_id = $1",
        [userId],
      );
      expect(charges.rows.filter((c) => c.state !== "settled")).toEqual([]);
      expect(charges.rows).toHaveLength(billed.length);
      const total = expected.reduce((sum, e) => sum + e.quota, 0);
      expect(charges.rows.reduce((sum, c) => sum + Number(c.settled), 0)).toBe(total);
      const balance = await client.query<{ quota: string }>("select quota from users where id = $1", [userId]);
      expect(INITIAL_QUOTA - Number(balance.rows[0]?.quota)).toBe(total);
      // Both runs of both instances served calls: the restarted ones were put back in rotation.
      expect(new Set(charges.rows.map((c) => c.instance))).toEqual(
        new Set(["gateway-1-run-1", "gateway-2-run-1", "gateway-1-run-2", "gateway-2-run-2"]),
      );
    } finally {
      await client.end();
    }
  }, 180_000);
});
