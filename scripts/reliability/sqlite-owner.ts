import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Child, freePort, gatewayReady, startChild, stopChild, waitReady } from "./processes.js";

export interface SecondProcessFigures {
  firstPid: number;
  exitCode: number | null;
  /** The lines the second process printed (the refusal, expected as one line). */
  lines: string[];
  violations: string[];
}

/**
 * One gateway on a SQLite store, then a second on the same DATA_DIR: the second must exit with
 * code 1 and one line naming the first's pid, and the first must still answer.
 */
export async function secondProcessOnSqlite(
  adminKey: string,
  track: (child: Child) => void,
  tempDirs: string[],
): Promise<SecondProcessFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-rel-sqlite-"));
  tempDirs.push(dir);
  const env = {
    DATABASE_URL: "",
    REDIS_URL: "",
    DATA_DIR: dir,
    ADMIN_KEY: adminKey,
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
  };
  const firstPort = await freePort();
  const first = startChild("sqlite-first", firstPort, ["serve", "--port", String(firstPort)], env);
  track(first);
  const violations: string[] = [];
  try {
    await waitReady(first, () => gatewayReady(first.url));
    const secondPort = await freePort();
    const second = startChild("sqlite-second", secondPort, ["serve", "--port", String(secondPort)], env);
    track(second);
    const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 30_000).unref());
    const exit = await Promise.race([second.exited, timer]);
    if (exit === "timeout") {
      await stopChild(second);
      violations.push("a second process on the same SQLite file was still running after 30 s");
    }
    const exitCode = exit === "timeout" ? null : exit;
    const firstPid = first.proc.pid as number;
    if (exitCode !== 1) violations.push(`the second process on the same SQLite file exited with ${exitCode}, not 1`);
    if (second.lines.length !== 1 || !second.lines[0]?.includes(`pid ${firstPid}`)) {
      violations.push(
        `the second process did not print one line naming pid ${firstPid}: ${JSON.stringify(second.lines)}`,
      );
    }
    if (!(await gatewayReady(first.url))) violations.push("the first SQLite gateway stopped answering");
    return { firstPid, exitCode, lines: second.lines, violations };
  } finally {
    await stopChild(first);
  }
}
