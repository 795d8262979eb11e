/**
 * Many instances, one crash: three gateway processes on one PostgreSQL and one Redis, the
 * simulator behind them, 1,000 tasks of both families submitted across the instances (some marked
 * to fail upstream, some to be refused, and an extra channel whose port is closed), one instance
 * killed with SIGKILL mid-run and restarted, a fuzz pass against the live cluster, and then the
 * money checked row by row in the store. Prints a table; exits 1 when any violation is found.
 * Loopback only; bounded in time; every child stopped by its PID at the end.
 *
 *   npm run reliability            (TEST_DATABASE_URL and TEST_REDIS_URL, or the local defaults)
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { type FuzzRequest, fuzzViolation, operationsOf, requestFor } from "../../test/reliability/fuzz-requests.js";
import { callGateway } from "../../test/reliability/harness.js";
import {
  fetchViolations,
  type Outcome,
  outcomeViolations,
  type Submission,
  secretViolations,
} from "./outcome-checks.js";
import { type Child, freePort, gatewayReady, killChild, startChild, stopChild, waitReady } from "./processes.js";
import { createRunDatabase, RunStore } from "./store-checks.js";

const PG_SERVER = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
const TASKS = Number(process.env.RELIABILITY_TASKS || 1000);
const FUZZ_CASES = Number(process.env.RELIABILITY_FUZZ_CASES || 300);
const CONCURRENCY = 16;
const KILL_AFTER = Math.floor(TASKS * 0.4);
const RUN_LIMIT_MS = 8 * 60_000;
const ADMIN_KEY = `adm-reliability-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const SIM_KEY = `chan-reliability-${Math.random().toString(36).slice(2)}`;

const children: Child[] = [];
const tempDirs: string[] = [];
let dropDatabase: (() => Promise<void>) | null = null;

function log(line: string) {
  process.stdout.write(`[reliability] ${line}\n`);
}

async function startGateway(index: number, port: number, databaseUrl: string, prefix: string): Promise<Child> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `mg-rel-${index}-`));
  tempDirs.push(dir);
  const child = startChild(`gateway-${index}`, port, ["serve", "--port", String(port)], {
    DATABASE_URL: databaseUrl,
    REDIS_URL: REDIS,
    REDIS_KEY_PREFIX: prefix,
    ADMIN_KEY,
    DATA_DIR: dir,
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: "warn",
    TASK_POLL_INTERVAL_MS: "250",
    TASK_MAX_POLL_INTERVAL_MS: "1000",
    TASK_WORKER_TICK_MS: "50",
    // A killed worker's claimed tasks are taken over once this lease runs out.
    TASK_LEASE_MS: "3000",
    // Tasks charged by the killed instance but never sent are swept after this.
    TASK_UNSENT_GRACE_MS: "5000",
    TASK_TIMEOUT_SECONDS: "300",
    // The channel with the closed port keeps injecting faults instead of being disabled.
    ROUTING_DISABLE_AFTER_FAILURES: "1000000",
    // The fuzz pass sends many bad keys from one address.
    LIMIT_AUTH_FAILURES_PER_MINUTE: "1000000",
  });
  children.push(child);
  await waitReady(child, () => gatewayReady(child.url));
  return child;
}

async function admin(base: string, method: string, urlPath: string, body?: unknown) {
  const res = await callGateway(base, method, `/api/admin${urlPath}`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    body,
  });
  if (res.status !== 200) throw new Error(`${method} ${urlPath}: ${res.status} ${res.text}`);
  return res.body.data;
}

async function run(): Promise<number> {
  const started = Date.now();
  const violations: string[] = [];
  const db = await createRunDatabase(PG_SERVER);
  dropDatabase = db.drop;
  const prefix = `mg-reliability-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  const simPort = await freePort();
  const sim = startChild("simulator", simPort, ["simulate", "--port", String(simPort), "--seed", "20260707"]);
  children.push(sim);
  await waitReady(sim, async () => (await fetch(`${sim.url}/audioa/fetch`, { method: "POST" })).status === 401);

  const ports = [await freePort(), await freePort(), await freePort()];
  // The first instance migrates the fresh store alone; the others start once it is ready.
  const gateways = [await startGateway(1, ports[0] as number, db.url, prefix)];
  gateways.push(
    ...(await Promise.all([
      startGateway(2, ports[1] as number, db.url, prefix),
      startGateway(3, ports[2] as number, db.url, prefix),
    ])),
  );
  log(`simulator on ${sim.url}; gateways on ${gateways.map((g) => g.port).join(", ")}`);

  const base = (gateways[0] as Child).url;
  const closedPort = await freePort();
  await admin(base, "POST", "/channels", {
    name: "relay",
    type: "task-relay",
    base_url: sim.url,
    key: SIM_KEY,
    models: ["audioa"],
    weight: 9,
  });
  const dead = await admin(base, "POST", "/channels", {
    name: "relay-closed-port",
    type: "task-relay",
    base_url: `http://127.0.0.1:${closedPort}`,
    key: SIM_KEY,
    models: ["audioa"],
    weight: 1,
    settings: { connectTimeoutMs: 500 },
  });
  await admin(base, "POST", "/channels", {
    name: "record",
    type: "generate-record",
    base_url: sim.url,
    key: SIM_KEY,
    models: ["audiob"],
  });
  const users: Array<{ id: number; key: string }> = [];
  for (let i = 0; i < 10; i++) {
    const user = await admin(base, "POST", "/users", { name: `tenant-${i}`, quota: 100_000_000 });
    const token = await admin(base, "POST", `/users/${user.id}/tokens`, { name: "default" });
    users.push({ id: user.id, key: token.key });
  }
  const fuzzUser = await admin(base, "POST", "/users", { name: "fuzz", quota: 2_000_000_000 });
  const fuzzToken = await admin(base, "POST", `/users/${fuzzUser.id}/tokens`, { name: "fuzz" });

  // Submissions: both families, 10% marked to fail upstream, 2.5% marked to be refused at submit.
  const submissions: Submission[] = Array.from({ length: TASKS }, (_, i) => ({
    index: i,
    family: i % 2 === 0 ? "audioa" : "audiob",
    marker: i % 40 === 7 ? "[refuse]" : i % 10 === 3 ? "[fail]" : "",
    key: (users[i % users.length] as { key: string }).key,
  }));
  const submitStarted = Date.now();
  const live = new Set<number>([0, 1, 2]);
  let next = 0;
  let sent = 0;
  let lostToKill = 0;
  let killed = 0;
  let restart: Promise<void> | null = null;
  const outcomes: Outcome[] = [];

  const submitOne = async (s: Submission, attempt: number): Promise<Outcome> => {
    const candidates = [...live];
    const g = gateways[candidates[(s.index + attempt) % candidates.length] as number] as Child;
    const body = { prompt: `song ${s.index} ${s.marker}`.trim() };
    try {
      const res = await callGateway(g.url, "POST", `/${s.family}/submit/MUSIC`, {
        headers: { authorization: `Bearer ${s.key}` },
        body,
      });
      return {
        submission: s,
        status: res.status,
        taskId: res.status === 200 ? res.body.data : null,
        code: res.body?.code,
      };
    } catch {
      // The instance died under this call: whatever it had charged is the sweeper's to refund.
      lostToKill += 1;
      if (attempt > 5) throw new Error(`submit ${s.index} failed ${attempt} times`);
      return submitOne(s, attempt + 1);
    }
  };

  const worker = async () => {
    while (next < submissions.length) {
      const s = submissions[next++] as Submission;
      outcomes.push(await submitOne(s, 0));
      sent += 1;
      if (sent === KILL_AFTER && killed === 0) {
        killed += 1;
        const victim = gateways[1] as Child;
        log(`SIGKILL ${victim.name} (pid ${victim.proc.pid}) after ${sent} submissions`);
        await killChild(victim);
        live.delete(1);
        restart = (async () => {
          await new Promise((resolve) => setTimeout(resolve, 2000));
          gateways[1] = await startGateway(2, victim.port, db.url, prefix);
          live.add(1);
          log(`restarted gateway-2 (pid ${gateways[1]?.proc.pid})`);
        })();
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await restart;
  log(`${outcomes.length} submissions answered in ${((Date.now() - submitStarted) / 1000).toFixed(1)} s`);

  // Fuzz the live cluster while its workers finish the tasks.
  const doc = await callGateway(base, "GET", "/openapi.json");
  const operations = operationsOf(doc.body);
  let fuzzCases = 0;
  await fc.assert(
    fc.asyncProperty(
      requestFor(operations, { token: fuzzToken.key, adminKey: ADMIN_KEY }),
      async (req: FuzzRequest) => {
        const g = gateways[fuzzCases % gateways.length] as Child;
        fuzzCases += 1;
        const answer = await callGateway(g.url, req.method, req.path, { headers: req.headers, body: req.body });
        const violation = fuzzViolation(req, answer);
        if (violation) violations.push(`fuzz: ${violation}`);
      },
    ),
    { numRuns: FUZZ_CASES, seed: 20_260_707 },
  );

  const store = await RunStore.open(db.url);
  try {
    const waitUntil = Date.now() + 180_000;
    while ((await store.unfinishedTasks()) > 0 && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rows = await store.tasks();
    violations.push(...outcomeViolations(outcomes, rows));
    violations.push(...(await fetchViolations(outcomes, users, rows, gateways)));
    const figures = await store.ledgerFigures();
    violations.push(...figures.violations);
    const duplicates = await store.duplicateLedgerKeys();
    if (duplicates > 0) violations.push(`${duplicates} duplicate (reference, kind) ledger keys`);

    const secrets = [ADMIN_KEY, SIM_KEY, fuzzToken.key, ...users.map((u) => u.key)];
    violations.push(...secretViolations(children, secrets));

    const channels = (await admin(base, "GET", "/channels")) as Array<Record<string, number>>;
    const deadChannel = channels.find((c) => c.id === dead.id);
    const refusedConnections = Number(deadChannel?.requestCount ?? 0) - Number(deadChannel?.successCount ?? 0);
    const markers = submissions.filter((s) => s.marker !== "").length;
    const swept = await store.sweptTasks();
    const faults = killed + markers + refusedConnections + lostToKill;

    log(
      `tasks in the store: ${figures.tasks} (${figures.succeeded} succeeded, ${figures.failed} failed, ${figures.refunds} refunds, ` +
        `${figures.unfinished} unfinished; ${swept} charged by the killed instance, never sent, swept and refunded)`,
    );
    log(
      `faults: 1 SIGKILL, ${markers} tasks marked to fail or be refused, ${refusedConnections} submits to a closed port ` +
        `(failed over), ${lostToKill} submits cut by the kill (retried)`,
    );
    const terminal = figures.tasks - figures.unfinished;
    log(
      `checks: ${terminal}/${figures.tasks} tasks terminal; ${figures.chargedOnce}/${figures.tasks} charged exactly once; ` +
        `${duplicates} duplicate (reference, kind) keys; ${figures.failedRefundedOnce}/${figures.failed} failed tasks ` +
        `refunded exactly once; ${figures.succeededRefunded} succeeded tasks refunded; ${figures.balancesMatching}/` +
        `${figures.users} balances equal to their ledger sum`,
    );
    for (const v of violations.slice(0, 30)) log(`violation: ${v}`);
    const table = [
      "| tasks | instances killed | faults injected | fuzz cases | violations |",
      "|---:|---:|---:|---:|---:|",
      `| ${TASKS} | ${killed} | ${faults} | ${fuzzCases} | ${violations.length} |`,
    ];
    process.stdout.write(`\n${table.join("\n")}\n\n`);
    log(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return violations.length;
  } finally {
    await store.close();
  }
}

async function cleanUp() {
  await Promise.all(children.map((c) => stopChild(c)));
  if (dropDatabase) await dropDatabase().catch((err) => log(`could not drop the run database: ${err}`));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

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
