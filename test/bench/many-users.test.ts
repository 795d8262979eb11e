import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTarget } from "../../bench/load.js";
import { readOptions } from "../../bench/options.js";
import { renderReport } from "../../bench/report.js";
import type { BenchResults, TargetResult } from "../../bench/results.js";

describe("the benchmark's many-users load", () => {
  let server: http.Server;
  let url: string;
  const seen = new Map<string, number>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const key = String(req.headers["x-goog-api-key"]);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      req.resume();
      req.on("end", () => res.end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta/models/m:generateContent`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("reads --users (default one user) and refuses zero", () => {
    expect(readOptions([], {}).users).toBe(1);
    expect(readOptions(["--users", "50"], {}).users).toBe(50);
    expect(readOptions([], { BENCH_USERS: "7" }).users).toBe(7);
    expect(() => readOptions(["--users", "0"], {})).toThrow(/--users/);
  });

  it("spreads a load over every key given, evenly, and sends one key per request", async () => {
    seen.clear();
    const keys = ["k1", "k2", "k3", "k4", "k5"];
    const headers = (key: string) => ({ "content-type": "application/json", "x-goog-api-key": key });
    const result = await loadTarget(
      { url, headers: headers("k1"), body: "{}", headerSets: keys.map(headers) },
      { connections: 3, durationSeconds: 1, warmupSeconds: 0 },
    );
    expect(result.ok).toBeGreaterThan(20);
    expect([...seen.keys()].sort()).toEqual(keys);
    const counts = [...seen.values()];
    // Each connection sends the keys in turn: the counts differ by at most one per connection.
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(3);
  });

  it("reports the users of a run and PostgreSQL against SQLite for them", () => {
    const load = (rps: number, serverMs: number) => ({
      requestsPerSecond: rps,
      latencyMs: { p50: 1, p99: 2, mean: 1, max: 3 },
      requests: rps,
      ok: rps,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      durationSeconds: 1,
      connections: 50,
      round: 1,
      cpu: [{ name: "server", msPerRequest: serverMs, busyPercent: 50 }],
    });
    const gateway = (id: TargetResult["id"], rps: number, serverMs: number): TargetResult => ({
      id,
      label: id,
      description: id,
      available: true,
      generate: load(rps, serverMs),
      generateRounds: [load(rps, serverMs)],
    });
    const results = {
      date: "d",
      startedAt: "s",
      finishedAt: "f",
      machine: { cpus: 2, cpuModel: "cpu", memoryGiB: 4, platform: "linux", node: "v20" },
      settings: {
        upstream: "minimal",
        connections: 50,
        durationSeconds: 1,
        warmupSeconds: 0,
        rounds: 1,
        firstEventRequests: 1,
        model: "m",
        prompt: "p",
        streamPrompt: "p",
        firstEventPrompt: "p",
        users: 50,
      },
      peer: { package: "peer", version: null, node: "v20", works: false },
      targets: [gateway("gateway-sqlite", 2000, 0.3), gateway("gateway-postgres", 1200, 0.36)],
      images: { notes: [] },
      memory: [],
      tasks: [],
      checks: [],
      notes: [],
    } satisfies BenchResults;
    const page = renderReport(results, null);
    expect(page).toContain("- Users: 50 users on each gateway");
    expect(page).toContain("| generateContent, 50 users | 60% | 1.20x | met |");
    const hot = renderReport({ ...results, settings: { ...results.settings, users: undefined } }, null);
    expect(hot).not.toContain("- Users:");
    expect(hot).toContain("| generateContent, one hot user | 60% | 1.20x | met |");
  });
});
