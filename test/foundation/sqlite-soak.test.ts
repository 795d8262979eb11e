import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SOAK = path.resolve(import.meta.dirname, "../support/sqlite-soak.mjs");
const RUNS = 4;

function soak(
  dir: string,
  seed: number,
): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  const child = spawn(process.execPath, ["--expose-gc", SOAK, dir, String(seed)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, out, err })));
}

/** On Node 22.16 and later the store runs on the built-in driver; on Node 20 on better-sqlite3. */
function expectedDriver() {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 16) ? "node:sqlite" : "better-sqlite3";
}

describe(`the SQLite store on Node ${process.versions.node}`, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-soak-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("survives statements dropped and collected, worker threads ending and an exit under load, every time", {
    timeout: 120_000,
  }, async () => {
    const runs = await Promise.all(Array.from({ length: RUNS }, (_, seed) => soak(dir, seed)));
    for (const run of runs) {
      expect(run.err).not.toMatch(/Assertion failed|Aborted|Segmentation/);
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      const summary = JSON.parse(run.out.trim()) as { driver: string; written: number };
      expect(summary.driver).toBe(expectedDriver());
      expect(summary.written).toBeGreaterThan(0);
    }
  });
});
