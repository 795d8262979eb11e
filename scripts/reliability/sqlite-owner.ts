import { linkSync, mkdtempSync, symlinkSync, unlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openSqlite } from "../../src/store/sqlite/connection.js";
import { adminCall } from "./cluster.js";
import { type Child, freePort, gatewayReady, startChild, stopChild, waitReady } from "./processes.js";

/** One second process started on the owner's SQLite file, and how it ended. */
export interface SecondProcessAttempt {
  /** How it named the owner's file. */
  via: string;
  exitCode: number | null;
  /** The lines it printed (the refusal, expected as one line). */
  lines: string[];
  /** Its one line says why: the owner's pid, or the file's second name. */
  explained: boolean;
}

export interface SecondProcessFigures {
  firstPid: number;
  attempts: SecondProcessAttempt[];
  /** The first gateway still answered, and wrote, after every attempt. */
  firstAnswering: boolean;
  /** SQLite's `integrity_check` of the file once the first gateway stopped ("ok"). */
  integrity: string;
  violations: string[];
}

/** How long a second process may take to be refused before it counts as running. */
const REFUSAL_LIMIT_MS = 30_000;

/**
 * One gateway on a SQLite store, then second processes on the same file: through the same
 * DATA_DIR, through a symlink to the file, and through a hard link to it made while the first
 * serves. Each must exit with code 1 and one line saying why (the first's pid; for the hard link,
 * the file's two names), and the first must still answer and write; once it stops, the file must
 * pass SQLite's integrity check.
 */
export async function secondProcessOnSqlite(
  adminKey: string,
  track: (child: Child) => void,
  tempDirs: string[],
): Promise<SecondProcessFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-rel-sqlite-"));
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), "mg-rel-sqlite-other-"));
  tempDirs.push(dir, elsewhere);
  const file = path.join(dir, "gateway.sqlite");
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
  const attempts: SecondProcessAttempt[] = [];
  let firstAnswering = false;
  try {
    await waitReady(first, () => gatewayReady(first.url));
    const firstPid = first.proc.pid as number;
    const ownerNamed = (line: string) => line.includes(`pid ${firstPid}`);

    const attempt = async (via: string, settings: Record<string, string>, says: (line: string) => boolean) => {
      const port = await freePort();
      const second = startChild(`sqlite-second (${via})`, port, ["serve", "--port", String(port)], {
        ...env,
        ...settings,
      });
      track(second);
      const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), REFUSAL_LIMIT_MS).unref());
      const exit = await Promise.race([second.exited, timer]);
      if (exit === "timeout") {
        await stopChild(second);
        violations.push(`a second process through ${via} was still running after ${REFUSAL_LIMIT_MS / 1000} s`);
      }
      const exitCode = exit === "timeout" ? null : exit;
      const explained = second.lines.length === 1 && says(second.lines[0] as string);
      if (exitCode !== 1) violations.push(`the second process through ${via} exited with ${exitCode}, not 1`);
      if (!explained) {
        violations.push(
          `the second process through ${via} did not print one line saying why: ${JSON.stringify(second.lines)}`,
        );
      }
      attempts.push({ via, exitCode, lines: second.lines, explained });
    };

    await attempt("the same DATA_DIR", {}, ownerNamed);
    const symlink = path.join(elsewhere, "linked.sqlite");
    symlinkSync(file, symlink);
    await attempt("a symlink to the file", { DATA_DIR: elsewhere, DATABASE_URL: `sqlite:${symlink}` }, ownerNamed);
    // Beside the file: a hard link cannot cross file systems.
    const hardLink = path.join(dir, "hard-linked.sqlite");
    linkSync(file, hardLink);
    try {
      await attempt("a hard link to the file", { DATA_DIR: elsewhere, DATABASE_URL: `sqlite:${hardLink}` }, (line) =>
        line.includes("2 hard links"),
      );
    } finally {
      unlinkSync(hardLink);
    }

    // The first still answers, and writes: a user created through it is listed by it.
    try {
      await adminCall(first.url, adminKey, "POST", "/users", { name: "sqlite-owner-probe" });
      const users = (await adminCall(first.url, adminKey, "GET", "/users")) as Array<{ name: string }>;
      firstAnswering = (await gatewayReady(first.url)) && users.some((u) => u.name === "sqlite-owner-probe");
    } catch (err) {
      violations.push(`the first SQLite gateway failed after the second processes: ${(err as Error).message}`);
    }
    if (!firstAnswering) violations.push("the first SQLite gateway stopped answering");
  } finally {
    await stopChild(first);
  }
  const integrity = integrityOf(file);
  if (integrity !== "ok") violations.push(`the SQLite file failed its integrity check: ${integrity}`);
  return { firstPid: first.proc.pid as number, attempts, firstAnswering, integrity, violations };
}

function integrityOf(file: string): string {
  try {
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db.pragma("integrity_check") as Array<{ integrity_check: string }>;
      return rows.map((r) => r.integrity_check).join("; ");
    } finally {
      db.close();
    }
  } catch (err) {
    return `could not be read (${(err as Error).message})`;
  }
}
