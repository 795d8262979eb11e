import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, heapFlags } from "./heap-settings.js";

describe("heap settings", () => {
  const GROWING = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  const NO_PRETENURING = "--no-allocation-site-pretenuring";

  it("sets the old space's growing percent and turns pretenuring off when the process was started without either", () => {
    expect(heapFlags([])).toEqual([GROWING, NO_PRETENURING]);
    expect(heapFlags(["--enable-source-maps", "--max-old-space-size=512"])).toEqual([GROWING, NO_PRETENURING]);
  });

  it("leaves an operator's own setting of either alone, in any spelling", () => {
    expect(heapFlags(["--heap-growing-percent=80"])).toEqual([NO_PRETENURING]);
    expect(heapFlags(["--heap_growing_percent", "30"])).toEqual([NO_PRETENURING]);
    expect(heapFlags(["--allocation-site-pretenuring"])).toEqual([GROWING]);
    expect(heapFlags(["--noallocation_site_pretenuring"])).toEqual([GROWING]);
    expect(heapFlags(["--heap-growing-percent=0", "--no-allocation-site-pretenuring"])).toEqual([]);
  });

  it("does not take a flag of another name for the operator's", () => {
    expect(heapFlags(["--allocation-site-pretenuring-extra", "--heap-growing-percentage=5"])).toEqual([
      GROWING,
      NO_PRETENURING,
    ]);
  });

  it("sets flags this runtime's V8 knows (an unknown one is reported on stderr and ignored)", () => {
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
    expect(JSON.parse(run.stdout)).toEqual([GROWING, NO_PRETENURING]);
  });
});
