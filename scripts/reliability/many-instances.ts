/**
 * Many instances, several crashes: three gateway processes on one PostgreSQL and one Redis, the
 * simulator behind them. Tasks of both families are submitted across the instances while one
 * instance is killed; then streams, image calls, content and task submits (some retried with an
 * Idempotency-Key across instances) run while the instances are killed one after another, each
 * restarted. HAProxy (deploy/haproxy.cfg) is put in front of two instances, each of them stopped
 * with SIGTERM and restarted in turn under a steady load that must see no failed request. Videos
 * are made through `/v1/videos`, one instance killed while it copies a video to storage. A fuzz
 * pass runs against the live cluster, second processes are started on one SQLite gateway's file
 * (through its DATA_DIR, a symlink and a hard link: each refused), and then the money is checked:
 * against the store's rows, and against an
 * independent recomputation from the prices the run set and the usage the simulator reports.
 * Prints a table of every figure; exits 1 when any violation is found. Loopback only; bounded in
 * count and time; every child stopped by its PID at the end.
 *
 *   npm run reliability            (TEST_DATABASE_URL and TEST_REDIS_URL, or the local defaults)
 *   npm run reliability -- --help  (the size options)
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import type { UsageRecord } from "../../src/simulator/server.js";
import { type FuzzRequest, fuzzViolation, operationsOf, requestFor } from "../../test/reliability/fuzz-requests.js";
import { callGateway } from "../../test/reliability/harness.js";
import { runActionPhase } from "./action-phase.js";
import { startRunBucket } from "./bucket.js";
import {
  adminCall,
  CHARGE_OPEN_MS,
  CHARGE_REAP_INTERVAL_MS,
  Cluster,
  IDEMPOTENCY_LEASE_MS,
  TASK_LEASE_MS,
  TASK_UNSENT_GRACE_MS,
} from "./cluster.js";
import { startRunFront } from "./front.js";
import { type MediaUser, runMediaPhase } from "./media-phase.js";
import { checkMoney, RUN_PRICES } from "./money-report.js";
import { fetchViolations, outcomeViolations, secretViolations } from "./outcome-checks.js";
import { type Child, freePort, startChild, stopChild, waitReady } from "./processes.js";
import { runRollingPhase } from "./rolling-phase.js";
import { runOptions } from "./run-options.js";
import { setUpCatalog } from "./setup.js";
import { secondProcessOnSqlite } from "./sqlite-owner.js";
import { createRunDatabase, RunStore } from "./store-checks.js";
import { runTaskPhase } from "./task-phase.js";
import { runUploadPhase } from "./upload-phase.js";
import { runVideoPhase } from "./video-phase.js";

const PG_SERVER = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
const { tasks: TASKS, videos: VIDEOS, fuzzCases: FUZZ_CASES } = runOptions(process.argv.slice(2), process.env);
const RUN_LIMIT_MS = 8 * 60_000;
const ADMIN_KEY = `adm-reliability-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const SIM_KEY = `chan-reliability-${Math.random().toString(36).slice(2)}`;
/** Group and channel ratios the run sets, so the recomputation prices through both. */
const VIP_RATIO = 1.5;
const CHANNEL_RATIO = { content: 1.2, image: 0.8, task: 1 };

const children: Child[] = [];
const tempDirs: string[] = [];
let dropDatabase: (() => Promise<void>) | null = null;

function log(line: string) {
  process.stdout.write(`[reliability] ${line}\n`);
}

async function run(): Promise<number> {
  const started = Date.now();
  const violations: string[] = [];
  const db = await createRunDatabase(PG_SERVER);
  dropDatabase = db.drop;
  const prefix = `mg-reliability-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  // The instances share one bucket (s3rver on loopback, a process of its own), as many instances do.
  const s3 = await startRunBucket((c) => children.push(c), tempDirs);

  const simPort = await freePort();
  const sim = startChild("simulator", simPort, ["simulate", "--port", String(simPort), "--seed", "20260707"]);
  children.push(sim);
  await waitReady(sim, async () => (await fetch(`${sim.url}/audioa/fetch`, { method: "POST" })).status === 401);

  const ports = [await freePort(), await freePort(), await freePort()];
  // One public address for every instance, as behind a deployment's load balancer.
  const front = await startRunFront(await freePort(), ports, (c) => children.push(c), tempDirs);
  const cluster = new Cluster(
    ports,
    {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS,
      REDIS_KEY_PREFIX: prefix,
      ...s3.env,
      ADMIN_KEY,
      PUBLIC_BASE_URL: front.url,
      // The upload phase's files come from a host of the run on loopback.
      UPLOAD_ALLOW_PRIVATE_URLS: "true",
      // An upload's task may not be swept while its file is fetched: the sweep waits this long more.
      UPLOAD_FETCH_TIMEOUT_MS: "10000",
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      QUOTA_PER_UNIT: String(RUN_PRICES.quotaPerUnit),
      TASK_POLL_INTERVAL_MS: "250",
      TASK_MAX_POLL_INTERVAL_MS: "1000",
      TASK_WORKER_TICK_MS: "50",
      // A killed worker's claimed tasks are taken over once this lease runs out.
      TASK_LEASE_MS: String(TASK_LEASE_MS),
      // Tasks charged by a killed instance but never sent are swept after this.
      TASK_UNSENT_GRACE_MS: String(TASK_UNSENT_GRACE_MS),
      TASK_TIMEOUT_SECONDS: "300",
      // A content or image charge not closed by this (nor kept open by a stream's progress) is reaped.
      CHARGE_OPEN_MS: String(CHARGE_OPEN_MS),
      CHARGE_REAP_INTERVAL_MS: String(CHARGE_REAP_INTERVAL_MS),
      // A killed instance's Idempotency-Keys are taken over by a retry once this lease runs out.
      IDEMPOTENCY_LEASE_MS: String(IDEMPOTENCY_LEASE_MS),
      IDEMPOTENCY_WAIT_MS: "20000",
      // The channel with the closed port keeps injecting faults instead of being disabled.
      ROUTING_DISABLE_AFTER_FAILURES: "1000000",
      // The fuzz pass sends many bad keys from one address.
      LIMIT_AUTH_FAILURES_PER_MINUTE: "1000000",
    },
    (child) => children.push(child),
    tempDirs,
  );
  // The first instance migrates the fresh store alone; the others start once it is ready.
  await cluster.start(0);
  await Promise.all([cluster.start(1), cluster.start(2)]);
  log(`simulator on ${sim.url}; gateways on ${ports.join(", ")}; public address ${front.url}`);

  const base = (cluster.gateways[0] as Child).url;
  const admin = (method: string, urlPath: string, body?: unknown) =>
    adminCall((cluster.gateways[0] as Child).url, ADMIN_KEY, method, urlPath, body);
  const { dead, initial, taskUsers, mediaUsers, fuzzToken } = await setUpCatalog(admin, sim.url, SIM_KEY, {
    vipRatio: VIP_RATIO,
    channelRatio: CHANNEL_RATIO,
  });

  const taskStarted = Date.now();
  const tasks = await runTaskPhase(cluster, {
    tasks: TASKS,
    users: taskUsers,
    concurrency: 16,
    killAfter: Math.floor(TASKS * 0.4),
    instance: 1,
    downMs: 2000,
    log,
  });
  log(`${tasks.outcomes.length} task submissions answered in ${((Date.now() - taskStarted) / 1000).toFixed(1)} s`);

  const mediaStarted = Date.now();
  const media = await runMediaPhase(cluster, {
    users: mediaUsers,
    channelRatio: CHANNEL_RATIO,
    concurrency: 14,
    kills: [
      { instance: 2, atMs: 5_000 },
      { instance: 0, atMs: 12_000 },
      { instance: 1, atMs: 19_000 },
    ],
    downMs: 1500,
    log,
  });
  log(
    `${media.calls.length} media calls in ${((Date.now() - mediaStarted) / 1000).toFixed(1)} s ` +
      `(${media.refused} refused, ${media.idempotentRetries} retries with an Idempotency-Key)`,
  );
  media.inFlightAtKills.forEach((k, i) => {
    log(
      `kill ${i + 2}: in flight on the victim: ${k.stream} streams, ${k.image} image calls, ${k.content} content, ${k.task} task submits`,
    );
  });

  const actions = await runActionPhase(cluster, { users: taskUsers.slice(0, 2), log });
  violations.push(...actions.violations);
  tasks.outcomes.push(...actions.outcomes);
  tasks.calls.push(...actions.calls);

  const uploads = await runUploadPhase(cluster, {
    users: taskUsers.slice(6, 8),
    simUrl: sim.url,
    admin,
    bucket: s3,
    instance: 2,
    downMs: 1500,
    log,
  });
  violations.push(...uploads.violations);
  tasks.outcomes.push(...uploads.outcomes);
  tasks.calls.push(...uploads.calls);

  const rollingUser = mediaUsers[0] as MediaUser;
  const rolling = await runRollingPhase(cluster, {
    user: rollingUser,
    model: Object.keys(RUN_PRICES.tokens)[0] as string,
    channelRatio: CHANNEL_RATIO.content,
    balancer: front.balancer,
    log,
  });
  violations.push(...rolling.violations);
  media.calls.push(...rolling.calls);

  const store = await RunStore.open(db.url);
  try {
    const videos = await runVideoPhase(cluster, {
      users: taskUsers.slice(2, 6),
      videos: VIDEOS,
      simUrl: sim.url,
      store,
      downMs: 1500,
      log,
    });
    violations.push(...videos.violations);

    // Every charge closes: wait for the store to hold none open (bounded), before any more traffic.
    const boundMs = CHARGE_OPEN_MS + 5 * CHARGE_REAP_INTERVAL_MS;
    const lastRestart = Math.max(...cluster.kills.map((k) => k.restartedAt));
    // The wait is capped, so a run whose reaper is slowed still ends (and reports what is open).
    const waitEnd = lastRestart + Math.min(boundMs + 10_000, 45_000);
    while ((await store.openCharges()) > 0 && Date.now() < waitEnd) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const chargeRows = await store.charges();
    log(
      `${chargeRows.filter((c) => c.state === "open").length} charges open ${Date.now() - lastRestart} ms after the last restart`,
    );

    const sqlite = await secondProcessOnSqlite(ADMIN_KEY, (c) => children.push(c), tempDirs);

    for (const a of sqlite.attempts) {
      log(`second process on one SQLite file through ${a.via}: exit code ${a.exitCode}; ${a.lines.join(" / ")}`);
    }
    // Fuzz the live cluster, as its own user (left out of the recomputation).
    const doc = await callGateway(base, "GET", "/openapi.json");
    const operations = operationsOf(doc.body);
    let fuzzCases = 0;
    await fc.assert(
      fc.asyncProperty(
        requestFor(operations, { token: fuzzToken.key, adminKey: ADMIN_KEY }),
        async (req: FuzzRequest) => {
          const g = cluster.gateways[fuzzCases % cluster.gateways.length] as Child;
          fuzzCases += 1;
          const answer = await callGateway(g.url, req.method, req.path, { headers: req.headers, body: req.body });
          const violation = fuzzViolation(req, answer);
          if (violation) violations.push(`fuzz: ${violation}`);
        },
      ),
      { numRuns: FUZZ_CASES, seed: 20_260_707 },
    );

    log(`${fuzzCases} fuzz cases answered`);
    const waitUntil = Date.now() + 120_000;
    while ((await store.unfinishedTasks()) > 0 && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rows = await store.tasks();
    violations.push(...outcomeViolations(tasks.outcomes, rows));
    violations.push(...(await fetchViolations(tasks.outcomes, taskUsers, rows, cluster.gateways)));
    const ledger = await store.ledgerFigures();
    violations.push(...ledger.violations);
    const duplicates = await store.duplicateLedgerKeys();
    const secrets = [
      ADMIN_KEY,
      SIM_KEY,
      fuzzToken.key,
      ...taskUsers.map((u) => u.key),
      ...mediaUsers.map((u) => u.key),
    ];
    violations.push(...secretViolations(children, secrets));

    const usage = (await (await fetch(`${sim.url}/simulator/usage`)).json()) as { records: UsageRecord[] };
    const money = checkMoney({
      chargeRows,
      kills: cluster.kills,
      boundMs,
      balances: await store.balances(),
      initial,
      calls: [...tasks.calls, ...media.calls, ...videos.calls],
      records: usage.records,
      keys: await store.keyCharges(),
      sqlite,
    });
    violations.push(...money.violations);
    for (const line of money.perUser) log(line);

    const channels = (await admin("GET", "/channels")) as Array<Record<string, number>>;
    const deadChannel = channels.find((c) => c.id === dead.id);
    const refusedConnections = Number(deadChannel?.request_count ?? 0) - Number(deadChannel?.success_count ?? 0);
    const markers = tasks.submissions.filter((s) => s.marker !== "").length;
    const terminal = ledger.tasks - ledger.unfinished;
    const figures: Array<[string, string, string]> = [
      ["instances killed (SIGKILL) and restarted", `${cluster.kills.length}`, "several"],
      ["task submits in flight at the task-phase kill", `${tasks.inFlightAtKill}`, ""],
      [
        "tasks marked to fail or be refused; submits to a closed port; submits cut by a kill",
        `${markers}; ${refusedConnections}; ${tasks.lostToKill}`,
        "",
      ],
      ["tasks terminal", `${terminal}/${ledger.tasks}`, "all"],
      ["tasks charged exactly once", `${ledger.chargedOnce}/${ledger.tasks}`, "all"],
      [
        "failed tasks refunded exactly once; succeeded tasks refunded",
        `${ledger.failedRefundedOnce}/${ledger.failed}; ${ledger.succeededRefunded}`,
        "all; 0",
      ],
      ["balances equal to their ledger sum", `${ledger.balancesMatching}/${ledger.users}`, "all"],
      [
        "duplicate (reference, kind) ledger keys",
        `${duplicates}`,
        "guaranteed by the ledger's unique key: not a check",
      ],
      ...uploads.figures,
      ...videos.figures,
      ...rolling.figures,
      ...money.figures,
      ["fuzz cases against the live cluster", `${fuzzCases}`, "no 5xx, each in its surface's shape"],
    ];
    for (const v of violations) log(`violation: ${v}`);
    const table = [
      "| figure | value | expected |",
      "|---|---:|---|",
      ...figures.map(([f, v, e]) => `| ${f} | ${v} | ${e} |`),
      `| violations | ${violations.length} | 0 |`,
    ];
    const rolled = rolling.failed === null ? "skipped (no haproxy)" : `${rolling.failed}`;
    process.stdout.write(
      `\n${table.join("\n")}\n\nrequests failed across rolling restarts: ${rolled}\nviolations ${violations.length}\n`,
    );
    log(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return violations.length;
  } finally {
    await store.close();
  }
}

async function cleanUp() {
  await Promise.all(children.map((c) => stopChild(c)));
  // RELIABILITY_LOG_DIR keeps every child's lines, one file each, for diagnosis.
  const logDir = process.env.RELIABILITY_LOG_DIR;
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    for (const c of children)
      writeFileSync(path.join(logDir, `${c.name}-${c.proc.pid}.log`), `${c.lines.join("\n")}\n`);
  }
  if (dropDatabase) await dropDatabase().catch((err) => log(`could not drop the run database: ${err}`));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

// Stopped from outside (Ctrl-C, SIGTERM): the children and the database go too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}; stopping`);
    void cleanUp().finally(() => process.exit(2));
  });
}

// A failure outside the awaited path (a restart that fails inside a phase) stops the run the same way.
process.once("unhandledRejection", (err) => {
  log(`run failed: ${(err as Error)?.stack ?? err}`);
  void cleanUp().finally(() => process.exit(1));
});

const guard = setTimeout(() => {
  log(`run exceeded ${RUN_LIMIT_MS / 1000} s; stopping`);
  void cleanUp().finally(() => process.exit(2));
}, RUN_LIMIT_MS);

try {
  const found = await run();
  await cleanUp();
  clearTimeout(guard);
  process.exit(found === 0 ? 0 : 1);
} catch (err) {
  log(`run failed: ${(err as Error).stack ?? err}`);
  for (const child of children) {
    const tail = child.lines.slice(-5);
    if (tail.length > 0) log(`${child.name} last lines:\n${tail.join("\n")}`);
  }
  await cleanUp();
  clearTimeout(guard);
  process.exit(1);
}
