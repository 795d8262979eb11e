/**
 * Task submit load with every party in a process of its own, so that the gateway's own rate and
 * CPU show: the compiled gateway (bench/gateway-entry.mjs), the upstream simulator
 * (bench/tasks-simulator-entry.ts) and autocannon's client in this process. Measured: submits
 * answered 200 per second, their latency, and each server's CPU per submit from /proc.
 *
 * The simulator's tasks run far longer than the load and the gateway polls every 60 s, so the
 * gateway's work during the load is the submits: each one authenticated, validated, priced,
 * charged and inserted in one transaction, answered, then sent upstream and marked sent.
 */

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadTarget } from "./load.js";
import { ChildProcesses, cpuSecondsOf } from "./processes.js";

export interface SubmitLoadOptions {
  root: string;
  /**
   * Where the gateway's entry and its dist/ are (default `root`, built when stale): another
   * checkout's build, to compare two versions in alternating runs.
   */
  gatewayRoot?: string;
  /** sqlite (a file in a temporary folder) or a PostgreSQL URL of a database it may fill. */
  databaseUrl: string | null;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Node options of the gateway's process (`--cpu-prof --cpu-prof-dir=...` to profile it). */
  gatewayNodeArgs: string[];
  /** Keep the gateway's log and the SQLite file (their folder is printed). */
  keep: boolean;
}

const ADMIN_KEY = "bench-admin-key-0123456789abcdef";

async function admin(url: string, method: string, p: string, body?: unknown) {
  const res = await fetch(`${url}/api/admin${p}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (res.status !== 200 || !json.data) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Builds dist/ when a source is newer than it (the gateway runs the compiled code). */
export function buildIfStale(root: string): void {
  const built = spawnSync(process.execPath, [path.join(root, "scripts/build-if-stale.mjs")], {
    cwd: root,
    stdio: "inherit",
  });
  if (built.status !== 0) throw new Error(`the gateway's build failed (exit ${built.status ?? built.signal})`);
}

export async function runSubmitLoad(options: SubmitLoadOptions) {
  const gatewayRoot = options.gatewayRoot ?? options.root;
  if (!options.gatewayRoot) buildIfStale(options.root);
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-bench-submit-"));
  const children = new ChildProcesses();
  try {
    const sim = await children.start({
      name: "simulator",
      args: ["--import", "tsx", path.join(options.root, "bench/tasks-simulator-entry.ts")],
      cwd: options.root,
      env: { ...process.env, BENCH_COMPLETE_MS: "600000" },
      logFile: path.join(dir, "simulator.log"),
      ready: { kind: "ipc" },
    });
    const gateway = await children.start({
      name: "gateway",
      args: [...options.gatewayNodeArgs, path.join(gatewayRoot, "bench/gateway-entry.mjs")],
      cwd: gatewayRoot,
      env: {
        ...process.env,
        BENCH_DATABASE_URL: options.databaseUrl ?? `sqlite:${path.join(dir, "gateway.sqlite")}`,
        BENCH_DATA_DIR: dir,
        BENCH_ADMIN_KEY: ADMIN_KEY,
        BENCH_LOG_LEVEL: "info",
        BENCH_TASK_SETTINGS: JSON.stringify({
          pollIntervalMs: 60_000,
          maxPollIntervalMs: 120_000,
          workerTickMs: 1000,
          timeoutSeconds: 1800,
        }),
      },
      logFile: path.join(dir, "gateway.log"),
      ready: { kind: "ipc" },
    });
    await admin(gateway.url, "POST", "/channels", {
      name: "sim",
      type: "task-relay",
      base_url: sim.url,
      key: "sim-key",
      models: ["audioa"],
      settings: { concurrency: 64 },
    });
    const user = await admin(gateway.url, "POST", "/users", { name: "bench-submit", quota: 1_000_000_000_000 });
    const token = await admin(gateway.url, "POST", `/users/${user.id}/tokens`, { name: "bench" });
    // What the gateway spends with no load (its workers' ticks), to tell it from the submits' cost.
    const idleStart = cpuSecondsOf(gateway.pid);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idleEnd = cpuSecondsOf(gateway.pid);
    const loadBefore = os.loadavg()[0] as number;
    const cpuBefore = cpuSecondsOf(gateway.pid);
    const result = await loadTarget(
      {
        url: `${gateway.url}/audioa/submit/MUSIC`,
        headers: { authorization: `Bearer ${token.key as string}`, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "bench song", tags: "edm" }),
      },
      {
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
      },
      [
        { name: "gateway", pid: gateway.pid },
        { name: "simulator", pid: sim.pid },
      ],
    );
    const cpuAfter = cpuSecondsOf(gateway.pid);
    const loadAfter = os.loadavg()[0] as number;
    // The gateway first: its sends still in flight end before their upstream goes.
    await children.stop(gateway);
    await children.stop(sim);
    const gatewayCpu = result.cpu?.find((c) => c.name === "gateway");
    const simCpu = result.cpu?.find((c) => c.name === "simulator");
    return {
      connections: options.connections,
      seconds: result.durationSeconds,
      submitsPerSecond: Math.round(result.requestsPerSecond),
      ok: result.ok,
      non2xx: result.non2xx,
      errors: result.errors,
      p50Ms: result.latencyMs.p50,
      p99Ms: result.latencyMs.p99,
      gatewayCpuUsPerSubmit: gatewayCpu ? Math.round(gatewayCpu.msPerRequest * 1000) : null,
      gatewayBusyPercent: gatewayCpu ? Math.round(gatewayCpu.busyPercent) : null,
      simulatorCpuUsPerSubmit: simCpu ? Math.round(simCpu.msPerRequest * 1000) : null,
      gatewayIdleCpuPercent:
        idleStart !== null && idleEnd !== null ? Math.round(((idleEnd - idleStart) / 3) * 1000) / 10 : null,
      gatewayCpuSecondsWholeRun: cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null,
      loadAverage: [Math.round(loadBefore * 10) / 10, Math.round(loadAfter * 10) / 10],
      ...(options.keep ? { kept: dir } : {}),
    };
  } finally {
    await children.stopAll();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}
