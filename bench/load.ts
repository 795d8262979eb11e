/**
 * Fixed-concurrency load with autocannon: a warm-up run that is thrown away, then the measured
 * run. Requests per second count 2xx answers only, so a failing target cannot look fast.
 */
import autocannon from "autocannon";

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
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
}

function run(request: LoadRequest, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: request.url,
    method: "POST",
    headers: request.headers,
    body: request.body,
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 10,
  });
}

/** Loads one target at fixed connections for a fixed time; every connection stays on 127.0.0.1. */
export async function loadTarget(request: LoadRequest, settings: LoadSettings): Promise<LoadResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(request.url)) throw new Error(`not a loopback URL: ${request.url}`);
  if (settings.warmupSeconds > 0) await run(request, settings.connections, settings.warmupSeconds);
  const result = await run(request, settings.connections, settings.durationSeconds);
  const ok = result["2xx"];
  const seconds = result.duration > 0 ? result.duration : settings.durationSeconds;
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
  };
}
