import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { machineCpuTicks } from "../../bench/processes.js";

describe.runIf(existsSync("/proc/stat"))("the machine's CPU time from /proc/stat", () => {
  it("counts every CPU's time, the stolen part within it, and grows while a CPU works", () => {
    const before = machineCpuTicks();
    expect(before).not.toBeNull();
    expect(before?.steal).toBeGreaterThanOrEqual(0);
    expect(before?.steal).toBeLessThanOrEqual(before?.total ?? 0);
    // About 100 ms of work: at 100 ticks a second, at least a few ticks pass.
    const until = Date.now() + 100;
    let spin = 0;
    while (Date.now() < until) spin++;
    const after = machineCpuTicks();
    expect(spin).toBeGreaterThan(0);
    expect((after?.total ?? 0) - (before?.total ?? 0)).toBeGreaterThanOrEqual(5);
    expect((after?.steal ?? 0) - (before?.steal ?? 0)).toBeGreaterThanOrEqual(0);
  });
});
