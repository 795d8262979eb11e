/**
 * The rolling-restart phase of the run: through the run's public address (HAProxy with the
 * shipped configuration, see front.ts) a steady load of content answers, model lists and slow
 * streams, while each instance in turn is stopped with SIGTERM, started again and put back in
 * rotation. Every request must be answered; the calls join the money checks (billed for what each
 * client received).
 */
import type { HaproxyProcess } from "../../test/support/haproxy.js";
import { type Restartable, restartEach } from "../../test/support/rolling-restart.js";
import { startSteadyLoad } from "../../test/support/steady-load.js";
import type { Cluster } from "./cluster.js";
import type { ClientCall } from "./money-checks.js";

export interface RollingPhaseOptions {
  user: { id: number; key: string; groupRatio: number };
  model: string;
  /** The content channel's price ratio (the calls are priced at group ratio x this). */
  channelRatio: number;
  /** The run's balancer in front of every instance; null when HAProxy is not installed. */
  balancer: HaproxyProcess | null;
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
  const lb = o.balancer;
  if (!lb) {
    o.log("rolling restarts skipped: haproxy is not installed (apt-get install haproxy)");
    const figures: Array<[string, string, string]> = [["requests failed across rolling restarts", "skipped", "0"]];
    return { failed: null, requests: 0, calls: [], figures, violations: [] };
  }
  const behind = cluster.gateways.map((_, i) => i);
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
    // An instance the run killed just before may not be back in rotation yet: each is, first.
    const inRotation = () =>
      behind.every((i) => lb.transitions(`gateway-${i + 1}`, "UP") >= lb.transitions(`gateway-${i + 1}`, "DOWN"));
    const until = Date.now() + 20_000;
    while (!inRotation() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
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
