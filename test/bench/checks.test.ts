import { describe, expect, it } from "vitest";
import { checksFor, memoryCheck, relayCostChecks } from "../../bench/checks.js";
import { type LoadResult, medianOfRounds, medianRatio } from "../../bench/load.js";
import type { TargetResult } from "../../bench/results.js";

function load(round: number, requestsPerSecond: number, p99 = 10, serverMs = 0.5): LoadResult {
  return {
    requestsPerSecond,
    latencyMs: { p50: p99 / 2, p99, mean: p99 / 2, max: p99 * 2 },
    requests: requestsPerSecond * 5,
    ok: requestsPerSecond * 5,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    durationSeconds: 5,
    connections: 32,
    round,
    cpu: [{ name: "server", msPerRequest: serverMs, busyPercent: 90 }],
  };
}

function target(id: TargetResult["id"], rounds: LoadResult[]): TargetResult {
  return {
    id,
    label: id,
    description: id,
    available: true,
    generate: medianOfRounds(rounds),
    generateRounds: rounds,
  };
}

describe("benchmark figures over rounds", () => {
  it("takes the median of each figure and adds up the counts", () => {
    const summary = medianOfRounds([load(1, 100, 30, 0.9), load(2, 300, 10, 0.3), load(3, 200, 20, 0.5)]);
    expect(summary.requestsPerSecond).toBe(200);
    expect(summary.latencyMs.p99).toBe(20);
    expect(summary.latencyMs.max).toBe(60);
    expect(summary.ok).toBe(3000);
    expect(summary.rounds).toBe(3);
    expect(summary.cpu).toEqual([{ name: "server", msPerRequest: 0.5, busyPercent: 90 }]);
  });

  it("pairs loads of the same round for a ratio, whatever their order or a missing round", () => {
    const mine = [load(1, 50), load(2, 120), load(3, 90)];
    const other = [load(3, 100), load(1, 100)];
    // Round 1: 0.5, round 3: 0.9; round 2 has no partner.
    expect(medianRatio(mine, other, (r) => r.requestsPerSecond)).toBeCloseTo(0.7);
    expect(medianRatio(mine, undefined, (r) => r.requestsPerSecond)).toBeNull();
  });

  it("judges a target by the median of the per-round ratios, not by the ratio of the medians", () => {
    // The machine was fast in round 1 and slow in round 3; the gateway kept 60% of the relay in each.
    const relay = target("bare-relay", [load(1, 4000), load(2, 3000), load(3, 1000)]);
    const gateway = target("gateway-sqlite", [load(1, 2400), load(2, 1800), load(3, 600)]);
    const peer = target("peer", [load(1, 400, 200), load(2, 300, 400), load(3, 100, 900)]);
    const checks = checksFor(gateway, relay, peer);
    const byName = (part: string) => checks.find((c) => c.name.includes("generateContent") && c.name.includes(part));
    expect(byName("vs bare relay")).toMatchObject({ measured: "60.0%", verdict: "met" });
    expect(byName("requests/s vs peer")).toMatchObject({ measured: "6.0x", verdict: "missed" });
    expect(byName("p99 latency vs peer")).toMatchObject({ verdict: "met" });
    // A phase that was not run is not measured, never met.
    expect(checks.find((c) => c.name.includes("streamGenerateContent: requests/s vs bare relay"))).toMatchObject({
      verdict: "not measured",
    });
  });

  it("judges the relay cost against the bare relay: CPU per request, rate and p99, load by load", () => {
    const relay = target("bare-relay", [load(1, 4000, 10, 0.3), load(2, 3000, 12, 0.3)]);
    const gateway = target("gateway-sqlite", [load(1, 2800, 18, 0.42), load(2, 2400, 30, 0.39)]);
    const checks = relayCostChecks(gateway, relay);
    const generate = (part: string) => checks.find((c) => c.name.includes("generateContent:") && c.name.includes(part));
    // CPU 1.4x and 1.3x: median 1.35x.
    expect(generate("server CPU")).toMatchObject({ verdict: "met", measured: "1.35x (405 vs 300 µs)" });
    // 70% and 80% of the relay's rate: median 75%.
    expect(generate("requests/s")).toMatchObject({ measured: "75.0%", verdict: "met" });
    // p99 1.8x and 2.5x: median 2.15x.
    expect(generate("p99")).toMatchObject({ verdict: "missed" });
    // Chat was not loaded in this run: not measured, never met.
    expect(checks.filter((c) => c.name.includes("chat")).map((c) => c.verdict)).toEqual([
      "not measured",
      "not measured",
      "not measured",
    ]);
  });

  it("judges the gateway's RSS under load against the bare relay's", () => {
    const memory = [
      { name: "bare relay", idleMiB: 100, loadedMiB: 120, peakMiB: 130 },
      { name: "gateway (SQLite)", idleMiB: 200, loadedMiB: 240, peakMiB: 250 },
    ];
    expect(memoryCheck("gateway (SQLite)", memory)).toMatchObject({
      measured: "2.00x (240 vs 120 MiB)",
      verdict: "missed",
    });
    expect(memoryCheck("gateway (PostgreSQL)", memory).verdict).toBe("not measured");
  });
});
