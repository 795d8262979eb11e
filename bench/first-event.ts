/**
 * Time to first event of a server-sent event stream: N requests one after another, each timed
 * from the moment the request starts to the moment the first complete `data:` line arrives, and
 * to the end of the stream. A relay that buffers shows a first event close to its end of stream.
 */
import http from "node:http";
import type { LoadRequest } from "./load.js";

export interface FirstEventResult {
  requests: number;
  firstEventMs: { p50: number; p99: number; mean: number };
  endOfStreamMs: { p50: number; p99: number };
  /** `data:` events per stream (the median), to see that every event came through. */
  eventsPerStream: number;
  failures: number;
}

/** The p-th percentile (0..100) of sorted numbers, nearest rank. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

interface Timing {
  firstEventMs: number;
  endMs: number;
  events: number;
}

function oneStream(request: LoadRequest, agent: http.Agent): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstEventMs = Number.NaN;
    let text = "";
    const req = http.request(
      request.url,
      {
        method: "POST",
        agent,
        headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) },
        timeout: 30_000,
      },
      (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          if (Number.isNaN(firstEventMs) && /(^|\n)data:[^\n]*\n/.test(text))
            firstEventMs = performance.now() - started;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
          const events = (text.match(/(^|\n)data:/g) ?? []).length;
          resolve({ firstEventMs, endMs: performance.now() - started, events });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(request.body);
  });
}

/** Runs `count` streams one after another over one keep-alive connection (after two warm-up streams). */
export async function measureFirstEvent(request: LoadRequest, count: number): Promise<FirstEventResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const timings: Timing[] = [];
  let failures = 0;
  try {
    for (let i = 0; i < count + 2; i++) {
      try {
        const timing = await oneStream(request, agent);
        if (i >= 2) timings.push(timing);
      } catch {
        if (i >= 2) failures += 1;
      }
    }
  } finally {
    agent.destroy();
  }
  const first = timings
    .map((t) => t.firstEventMs)
    .filter((v) => !Number.isNaN(v))
    .sort((a, b) => a - b);
  const ends = timings.map((t) => t.endMs).sort((a, b) => a - b);
  const events = timings.map((t) => t.events).sort((a, b) => a - b);
  return {
    requests: timings.length,
    firstEventMs: {
      p50: percentile(first, 50),
      p99: percentile(first, 99),
      mean: first.length ? first.reduce((s, v) => s + v, 0) / first.length : Number.NaN,
    },
    endOfStreamMs: { p50: percentile(ends, 50), p99: percentile(ends, 99) },
    eventsPerStream: percentile(events, 50),
    failures: failures + (timings.length - first.length),
  };
}
