/**
 * The rolling-restart phase of the run: HAProxy with the shipped configuration
 * (deploy/haproxy.cfg, only its addresses and ports replaced, Docker's resolvers left out) in front
 * of the instances it names (gateway-1 and gateway-2), a steady load of content answers, model
 * lists and slow streams through it, while each of those instances in turn is stopped with
 * SIGTERM, started again and put back in rotation. Every request must be answered; the calls join
 * the money checks (billed for what each client received).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HAPROXY, loopbackConfig, startHaproxy } from "../../test/support/haproxy.js";
import { type Restartable, restartEach } from "../../test/support/rolling-restart.js";
import { startSteadyLoad } from "../../test/support/steady-load.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";
import { type Child, freePort, ROOT } from "./processes.js";

export interface RollingPhaseOptions {
  user: { id: number; key: string; groupRatio: number };
  model: string;
  /** The content channel's price ratio (the calls are priced at group ratio x this). */
  channelRatio: number;
  /** Registers the balancer's process, so that the run's clean-up stops it by its PID too. */
  track(child: Child): void;
  tempDirs: string[];
  log(line: string): void;
}

export interface RollingPhaseResult {
  /** Null when HAProxy is not installed (the phase is skipped). */
  failed: number | null;
  requests: number;
  calls: ClientCall[];
  figures: Array<[string, string, string]>;
  violations: string[];
}

export async function runRollingPhase(cluster: Cluster, o: RollingPhaseOptions): Promise<RollingPhaseResult> {
  if (!HAPROXY) {
    o.log("rolling restarts skipped: haproxy is not installed (apt-get install haproxy)");
    const figures: Array<[string, string, string]> = [["requests failed across rolling restarts", "skipped", "0"]];
    return { failed: null, requests: 0, calls: [], figures, violations: [] };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-rel-lb-"));
  o.tempDirs.push(dir);
  const port = await freePort();
  const behind = [0, 1];
  const config = loopbackConfig(readFileSync(path.join(ROOT, "deploy/haproxy.cfg"), "utf8"), {
    port,
    servers: Object.fromEntries(behind.map((i) => [`gateway-${i + 1}`, (cluster.gateways[i] as Child).port])),
    // The shipped interval: the instances run with the default readiness delay it is made for.
    checkInterval: "1s",
  });
  const lb = await startHaproxy(config, dir, port);
  o.track({ name: "haproxy", port, url: lb.url, proc: lb.proc, lines: lb.lines, exited: lb.exited });
  o.log(`HAProxy on ${lb.url} in front of ${behind.map((i) => `gateway-${i + 1}`).join(", ")}`);

  const load = startSteadyLoad({
    url: lb.url,
    key: o.user.key,
    model: o.model,
    clients: 4,
    streams: 3,
    streamChunks: 8,
    prefix: "roll",
  });
  let records: Awaited<ReturnType<typeof restartEach>> = [];
  const violations: string[] = [];
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const instances: Restartable[] = behind.map((i) => ({
      name: `gateway-${i + 1}`,
      stop: () => cluster.stopGracefully(i),
      start: async () => {
        await cluster.startAgain(i);
      },
    }));
    records = await restartEach(instances, lb, 120_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  } finally {
    await load.stop();
    await lb.stop();
  }
  for (const r of records) {
    o.log(`${r.name}: SIGTERM to exit ${r.stopMs} ms (code ${r.exitCode}); back in rotation ${r.backMs} ms later`);
    if (r.exitCode !== 0) violations.push(`rolling restart: ${r.name} exited ${r.exitCode} on SIGTERM`);
    if (!r.takenOutBeforeExit) violations.push(`rolling restart: ${r.name} closed before HAProxy took it out`);
  }
  const failures = load.calls.filter((c) => c.failure !== null);
  for (const c of failures) violations.push(`rolling restart: ${c.id}: ${c.failure}`);
  const streams = load.calls.filter((c) => c.kind === "stream");
  const calls: ClientCall[] = load.calls
    .filter((c) => c.kind !== "models")
    .map((c) => ({
      tag: c.tag,
      userId: o.user.id,
      kind: "content",
      priceName: o.model,
      ratio: o.user.groupRatio * o.channelRatio,
      answered: c.completed,
    }));
  o.log(`requests failed across rolling restarts: ${failures.length} of ${load.calls.length}`);
  return {
    failed: failures.length,
    requests: load.calls.length,
    calls,
    violations,
    figures: [
      [
        "requests through HAProxy across rolling restarts (SIGTERM); streams completed",
        `${load.calls.length}; ${streams.filter((s) => s.completed).length}/${streams.length}`,
        "",
      ],
      ["requests failed across rolling restarts", `${failures.length}`, "0"],
    ],
  };
}
