/** The targets of the issue, judged from one run's figures. */
import { type LoadResult, medianRatio } from "./load.js";
import { PHASES, type Phase, type ProcessMemory, roundsOf, type TargetCheck, type TargetResult } from "./results.js";

const METHOD: Record<Phase, string> = {
  generate: "generateContent",
  stream: "streamGenerateContent",
  chat: "chat completions (stream)",
};

const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

function check(
  name: string,
  goal: string,
  value: number | null,
  measured: (v: number) => string,
  met: (v: number) => boolean,
) {
  if (value === null || !Number.isFinite(value))
    return { name, goal, measured: "n/a", verdict: "not measured" } as TargetCheck;
  return { name, goal, measured: measured(value), verdict: met(value) ? "met" : "missed" } as TargetCheck;
}

/**
 * Checks one gateway target against the bare relay and the peer of the same run. Each ratio is
 * the median of the per-round ratios: round i of every target ran one after the other, so a
 * ratio compares the two under the same state of a shared machine.
 */
export function checksFor(gateway: TargetResult, bare: TargetResult | undefined, peer: TargetResult | undefined) {
  const label = gateway.label;
  const rps = (r: LoadResult) => r.requestsPerSecond;
  const p99 = (r: LoadResult) => r.latencyMs.p99;
  const out: TargetCheck[] = [];
  for (const phase of ["generate", "stream"] as const) {
    const method = METHOD[phase];
    const mine = gateway[phase];
    const rounds = roundsOf(gateway, phase);
    out.push(
      check(
        `${label}, ${method}: requests/s vs bare relay`,
        ">= 50%",
        medianRatio(rounds, roundsOf(bare, phase), rps),
        (v) => `${fixed(v * 100)}%`,
        (v) => v >= 0.5,
      ),
      check(
        `${label}, ${method}: requests/s vs peer`,
        ">= 10x",
        medianRatio(rounds, roundsOf(peer, phase), rps),
        (v) => `${fixed(v)}x`,
        (v) => v >= 10,
      ),
      check(
        `${label}, ${method}: p99 latency vs peer`,
        "<= 1/5 (20%)",
        medianRatio(rounds, roundsOf(peer, phase), p99),
        (v) =>
          `${fixed(v * 100)}% (${fixed(mine?.latencyMs.p99 ?? Number.NaN, 0)} vs ${fixed(peer?.[phase]?.latencyMs.p99 ?? Number.NaN, 0)} ms)`,
        (v) => v <= 0.2,
      ),
    );
  }
  const mineFirst = gateway.firstEvent?.firstEventMs.p50;
  const bareFirst = bare?.firstEvent?.firstEventMs.p50;
  out.push(
    check(
      `${label}, streaming: first event (p50) vs bare relay`,
      "within 2 ms",
      mineFirst !== undefined && bareFirst !== undefined ? mineFirst - bareFirst : null,
      (v) =>
        `${v >= 0 ? "+" : ""}${fixed(v, 2)} ms (${fixed(mineFirst ?? Number.NaN, 2)} vs ${fixed(bareFirst ?? Number.NaN, 2)} ms)`,
      (v) => v <= 2,
    ),
  );
  return out;
}

/** CPU time of the serving process per answered request, in ms (absent when /proc was not read). */
const serverMs = (r: LoadResult) => r.cpu?.find((c) => c.name === "server")?.msPerRequest ?? Number.NaN;

/**
 * The relay-cost targets against the bare relay, judged on runs with the minimal upstream (where
 * the upstream costs far less than either relay): on each load, the gateway's server CPU per
 * request at most 1.5x the bare relay's, its requests per second at least 65% of the bare relay's,
 * its p99 at most 2x. A load that was not run is "not measured".
 */
export function relayCostChecks(gateway: TargetResult, bare: TargetResult | undefined): TargetCheck[] {
  const label = gateway.label;
  const out: TargetCheck[] = [];
  for (const phase of PHASES) {
    const method = METHOD[phase];
    const mine = roundsOf(gateway, phase);
    const theirs = roundsOf(bare, phase);
    out.push(
      check(
        `${label}, ${method}: server CPU per request vs bare relay`,
        "<= 1.5x",
        medianRatio(mine, theirs, serverMs),
        (v) =>
          `${fixed(v, 2)}x (${fixed((gateway[phase] ? serverMs(gateway[phase]) : Number.NaN) * 1000, 0)} vs ${fixed((bare?.[phase] ? serverMs(bare[phase]) : Number.NaN) * 1000, 0)} µs)`,
        (v) => v <= 1.5,
      ),
      check(
        `${label}, ${method}: requests/s vs bare relay (minimal upstream)`,
        ">= 65%",
        medianRatio(mine, theirs, (r) => r.requestsPerSecond),
        (v) => `${fixed(v * 100)}%`,
        (v) => v >= 0.65,
      ),
      check(
        `${label}, ${method}: p99 latency vs bare relay`,
        "<= 2x",
        medianRatio(mine, theirs, (r) => r.latencyMs.p99),
        (v) =>
          `${fixed(v, 2)}x (${fixed(gateway[phase]?.latencyMs.p99 ?? Number.NaN, 0)} vs ${fixed(bare?.[phase]?.latencyMs.p99 ?? Number.NaN, 0)} ms)`,
        (v) => v <= 2,
      ),
    );
  }
  return out;
}

/** The gateway's highest RSS under load at most 1.5x the bare relay's. */
export function memoryCheck(gatewayName: string, memory: ProcessMemory[]): TargetCheck {
  const mine = memory.find((m) => m.name === gatewayName)?.loadedMiB ?? null;
  const bare = memory.find((m) => m.name === "bare relay")?.loadedMiB ?? null;
  return check(
    `${gatewayName}: RSS under load vs bare relay`,
    "<= 1.5x",
    mine !== null && bare !== null && bare > 0 ? mine / bare : null,
    (v) => `${fixed(v, 2)}x (${fixed(mine ?? Number.NaN, 0)} vs ${fixed(bare ?? Number.NaN, 0)} MiB)`,
    (v) => v <= 1.5,
  );
}
