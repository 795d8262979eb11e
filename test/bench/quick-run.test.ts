import { describe, expect, it } from "vitest";
import { readOptions } from "../../bench/options.js";
import { renderReport } from "../../bench/report.js";
import type { Phase } from "../../bench/results.js";
import { runBench } from "../../bench/run.js";

describe("npm run bench -- --quick", () => {
  it("loads every path on the minimal upstream, chat included, and every load is answered without errors", async () => {
    const lines: string[] = [];
    // The environment is left out so that BENCH_* variables of the machine do not stretch the run.
    const options = readOptions(["--quick", "--no-write"], {});
    expect(options).toMatchObject({ upstream: "minimal", rounds: 1, durationSeconds: 1, warmupSeconds: 0 });
    const results = await runBench(options, (line) => lines.push(line));

    expect(results.settings).toMatchObject({ upstream: "minimal", quick: true });
    const ids = ["direct", "bare-relay", "gateway-sqlite"] as const;
    for (const id of ids) {
      const target = results.targets.find((t) => t.id === id);
      expect(target?.available, `${id}: ${target?.unavailableReason}`).toBe(true);
      expect(target?.errors ?? []).toEqual([]);
      for (const phase of ["generate", "stream", "chat"] satisfies Phase[]) {
        const load = target?.[phase];
        expect(load?.ok, `${id} ${phase}`).toBeGreaterThan(0);
        expect(load?.non2xx, `${id} ${phase}`).toBe(0);
        expect(load?.errors, `${id} ${phase}`).toBe(0);
        // The machine's steal while the load ran is a share of its CPU time.
        expect(load?.stealPercent, `${id} ${phase}`).toBeGreaterThanOrEqual(0);
        expect(load?.stealPercent, `${id} ${phase}`).toBeLessThanOrEqual(100);
      }
      expect(target?.firstEvent?.eventsPerStream).toBe(2);
      expect(target?.firstEvent?.failures).toBe(0);
    }
    // The gateway's server CPU per request is read for each load, so the relay-cost targets are judged.
    const gateway = results.targets.find((t) => t.id === "gateway-sqlite");
    expect(gateway?.chat?.cpu?.find((c) => c.name === "server")?.msPerRequest).toBeGreaterThan(0);
    expect(results.checks.find((c) => c.name.includes("chat completions (stream): server CPU"))?.verdict).not.toBe(
      "not measured",
    );
    expect(results.images.gateway?.ok).toBeGreaterThan(0);
    expect(results.images.gateway?.non2xx).toBe(0);
    expect(results.memory.map((m) => m.name)).toEqual(["minimal upstream", "bare relay", "gateway (SQLite)"]);
    // The image load's RSS is kept apart: only the gateway serves it, so the relays are compared without it.
    const memoryOf = (name: string) => results.memory.find((m) => m.name === name);
    expect(memoryOf("gateway (SQLite)")?.loadedMiB).toBeGreaterThan(0);
    expect(memoryOf("gateway (SQLite)")?.imagesMiB).toBeGreaterThan(0);
    expect(memoryOf("bare relay")?.loadedMiB).toBeGreaterThan(0);
    expect(memoryOf("bare relay")?.imagesMiB).toBeNull();
    expect(results.peer.note).toMatch(/left out/);
    // The report says how much of the machine was stolen while its figures were measured.
    const report = renderReport(results, null);
    const loads = results.targets.filter((t) => t.available).length * 3;
    expect(report).toMatch(
      new RegExp(`- Machine steal \\(.*\\): median [\\d.]+%, highest [\\d.]+% over ${loads} loads\\.`),
    );
    expect(lines.some((line) => /machine steal \d+%/.test(line))).toBe(true);
  }, 180_000);
});
