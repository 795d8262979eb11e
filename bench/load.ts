/**
 * Fixed-concurrency load with autocannon: a warm-up run that is thrown away, then the measured
 * run. Requests per second count 2xx answers only, so a failing target cannot look fast.
 */
import autocannon from "autocannon";
import { cpuSecondsOf, machineCpuTicks } from "./processes.js";

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * Several callers (one key each): every connection sends these headers in turn, one set per
   * request, each connection starting at a set of its own, so that the load is spread evenly.
   */
  headerSets?: Record<string, string>[];
}

export interface LoadSettings {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  /** 2xx answers per second over the measured run. */
  requestsPerSecond: number;
  latencyMs: { p50: number; p99: number; mean: number; max: number };
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
  connections: number;
  /** Rounds this figure stands for (several: see `medianOfRounds`). */
  rounds?: number;
  /** Which round of its phase this load was (1, 2, ...): loads of one round number ran back to back. */
  round?: number;
  /**
   * CPU each watched process used during the measured run: per answered request, and as a share
   * of one core. On a shared machine this moves far less than requests per second do.
   */
  cpu?: ProcessCpu[];
  /**
   * Share of the machine's CPU time stolen by its hypervisor during the measured run, in percent
   * (from /proc/stat): the part of every CPU figure the machine itself, not the path, decided.
   */
  stealPercent?: number;
}

export interface ProcessCpu {
  name: string;
  msPerRequest: number;
  /** CPU seconds per second of the run, in percent of one core. */
  busyPercent: number;
}

/** A process whose CPU time is read before and after the measured run. */
export interface WatchedProcess {
  name: string;
  pid: number;
}

/** Connection i sends the header sets from set i on, in turn (autocannon builds each request once). */
function spreadOver(sets: Record<string, string>[], body: string) {
  let next = 0;
  return (client: autocannon.Client) => {
    const start = next++;
    client.setRequests(
      sets.map((_, k) => ({ method: "POST" as const, headers: { ...sets[(start + k) % sets.length] }, body })),
    );
  };
}

function run(request: LoadRequest, connections: number, seconds: number): Promise<autocannon.Result> {
  const sets = request.headerSets && request.headerSets.length > 1 ? request.headerSets : null;
  return autocannon({
    url: request.url,
    method: "POST",
    headers: request.headers,
    body: request.body,
    ...(sets ? { setupClient: spreadOver(sets, request.body) } : {}),
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 10,
  });
}

/** Loads one target at fixed connections for a fixed time; every connection stays on 127.0.0.1. */
export async function loadTarget(
  request: LoadRequest,
  settings: LoadSettings,
  watch: WatchedProcess[] = [],
): Promise<LoadResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(request.url)) throw new Error(`not a loopback URL: ${request.url}`);
  if (settings.warmupSeconds > 0) await run(request, settings.connections, settings.warmupSeconds);
  const before = watch.map((w) => cpuSecondsOf(w.pid));
  const machineBefore = machineCpuTicks();
  const result = await run(request, settings.connections, settings.durationSeconds);
  const machineAfter = machineCpuTicks();
  const after = watch.map((w) => cpuSecondsOf(w.pid));
  const machineTicks = machineBefore && machineAfter ? machineAfter.total - machineBefore.total : 0;
  const ok = result["2xx"];
  const seconds = result.duration > 0 ? result.duration : settings.durationSeconds;
  const answered = result.requests.total;
  const cpu: ProcessCpu[] = [];
  watch.forEach((w, i) => {
    const start = before[i];
    const end = after[i];
    if (start === null || start === undefined || end === null || end === undefined || answered === 0) return;
    cpu.push({
      name: w.name,
      msPerRequest: ((end - start) * 1000) / answered,
      busyPercent: ((end - start) / seconds) * 100,
    });
  });
  return {
    requestsPerSecond: ok / seconds,
    latencyMs: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      mean: result.latency.average,
      max: result.latency.max,
    },
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: seconds,
    connections: settings.connections,
    ...(cpu.length > 0 ? { cpu } : {}),
    ...(machineBefore && machineAfter && machineTicks > 0
      ? { stealPercent: ((machineAfter.steal - machineBefore.steal) / machineTicks) * 100 }
      : {}),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Several rounds of the same load as one figure: the median of each rate, latency and CPU figure
 * (a round disturbed by something else on a shared machine moves the median little), and the
 * counts of every round added up.
 */
export function medianOfRounds(rounds: LoadResult[]): LoadResult {
  if (rounds.length === 0) throw new Error("no rounds to summarise");
  const pick = (f: (r: LoadResult) => number) => median(rounds.map(f));
  const sum = (f: (r: LoadResult) => number) => rounds.reduce((total, r) => total + f(r), 0);
  const names = [...new Set(rounds.flatMap((r) => (r.cpu ?? []).map((c) => c.name)))];
  const cpu = names.map((name) => {
    const of = rounds.flatMap((r) => (r.cpu ?? []).filter((c) => c.name === name));
    return {
      name,
      msPerRequest: median(of.map((c) => c.msPerRequest)),
      busyPercent: median(of.map((c) => c.busyPercent)),
    };
  });
  const steals = rounds.flatMap((r) => (r.stealPercent === undefined ? [] : [r.stealPercent]));
  return {
    requestsPerSecond: pick((r) => r.requestsPerSecond),
    latencyMs: {
      p50: pick((r) => r.latencyMs.p50),
      p99: pick((r) => r.latencyMs.p99),
      mean: pick((r) => r.latencyMs.mean),
      max: Math.max(...rounds.map((r) => r.latencyMs.max)),
    },
    requests: sum((r) => r.requests),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    durationSeconds: sum((r) => r.durationSeconds),
    connections: rounds[0]?.connections ?? 0,
    rounds: rounds.length,
    ...(cpu.length > 0 ? { cpu } : {}),
    ...(steals.length > 0 ? { stealPercent: median(steals) } : {}),
  };
}

/**
 * The median over rounds of `pick(a) / pick(b)`, pairing loads of the same round (a ratio of one
 * machine state at a time); loads without a round number pair by position.
 */
export function medianRatio(
  a: LoadResult[] | undefined,
  b: LoadResult[] | undefined,
  pick: (r: LoadResult) => number,
): number | null {
  if (!a || !b) return null;
  const ratios: number[] = [];
  a.forEach((mine, i) => {
    const other = mine.round === undefined ? b[i] : b.find((r) => r.round === mine.round);
    if (other && pick(other) > 0) ratios.push(pick(mine) / pick(other));
  });
  return ratios.length > 0 ? median(ratios) : null;
}

/** This process's CPU µs per call of `one`, run `calls` times with `concurrency` calls at a time. */
export async function cpuPerCall(calls: number, concurrency: number, one: () => Promise<void>): Promise<number> {
  let left = calls;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left -= 1;
        await one();
      }
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}
