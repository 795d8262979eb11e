import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, heapFlags } from "./heap-settings.js";

describe("heap settings", () => {
  it("sets the old space's growing percent when the process was started without one", () => {
    expect(heapFlags([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    expect(heapFlags(["--enable-source-maps", "--max-old-space-size=512"])).toEqual([
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    ]);
  });

  it("leaves an operator's own setting alone, in either spelling", () => {
    expect(heapFlags(["--heap-growing-percent=80"])).toEqual([]);
    expect(heapFlags(["--heap_growing_percent", "30"])).toEqual([]);
  });

  it("is a flag this runtime's V8 knows (an unknown one is reported on stderr and ignored)", () => {
    const script = [
      `import { applyHeapSettings } from ${JSON.stringify(path.join(import.meta.dirname, "heap-settings.ts"))};`,
      "const flags = applyHeapSettings([]);",
      "globalThis.gc();",
      "process.stdout.write(JSON.stringify(flags));",
    ].join("\n");
    const run = spawnSync(process.execPath, ["--import", "tsx", "--expose-gc", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/unrecognized flag/i);
    expect(JSON.parse(run.stdout)).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
