import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HAS_PG, PG_URL } from "../support/postgres.js";
import { refusedPort } from "../support/refused-port.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN_KEY = "startup-admin-key-0123456789";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mg-startup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `node dist/main.js serve` with only the given environment (and PATH): exit code and stderr. */
function serve(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["dist/main.js", "serve", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", ADMIN_KEY, DATA_DIR: dir, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

/** Exit 1 and exactly one line on stderr, no stack trace, matching `line`. */
function expectOneLine(result: { code: number | null; stderr: string }, line: RegExp) {
  expect(result.code).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe("a start-up failure is one line naming the setting, the fault and the remedy", () => {
  it.concurrent("an unreachable REDIS_URL", async () => {
    const port = await refusedPort();
    expectOneLine(
      await serve({ REDIS_URL: `redis://127.0.0.1:${port}`, DATA_DIR: path.join(dir, "redis") }),
      new RegExp(
        `^media-gateway: cannot start: REDIS_URL: no Redis server could be reached at 127\\.0\\.0\\.1:${port} .*; start Redis or correct REDIS_URL`,
      ),
    );
  });

  it.concurrent("an unreachable PostgreSQL", async () => {
    const port = await refusedPort();
    const result = await serve({ DATABASE_URL: `postgres://gw:s3cret-pw@127.0.0.1:${port}/gateway` });
    expectOneLine(
      result,
      new RegExp(
        `^media-gateway: cannot start: DATABASE_URL: no PostgreSQL server could be reached at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); start PostgreSQL or correct the host and port`,
      ),
    );
    expect(result.stderr).not.toContain("s3cret-pw");
  });

  (HAS_PG ? it.concurrent : it.skip)("a PostgreSQL database that does not exist", async () => {
    const url = new URL(PG_URL);
    url.pathname = "/mg_no_such_database_here";
    expectOneLine(
      await serve({ DATABASE_URL: url.toString() }),
      /^media-gateway: cannot start: DATABASE_URL: database "mg_no_such_database_here" does not exist on the PostgreSQL server at .+; create it \(createdb .+\) or name an existing database/,
    );
  });

  it.concurrent("a busy port", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      expectOneLine(
        await serve({ PORT: String(port), DATA_DIR: path.join(dir, "busy") }),
        new RegExp(
          `^media-gateway: cannot start: PORT: 127\\.0\\.0\\.1:${port} is already in use by another process; stop that process or choose a free port`,
        ),
      );
    } finally {
      server.close();
    }
  });

  it.concurrent("a DATA_DIR that cannot be written", async () => {
    // A directory below a plain file cannot be created, whoever runs the test.
    const file = path.join(dir, "plain-file");
    writeFileSync(file, "");
    expectOneLine(
      await serve({ DATA_DIR: path.join(file, "data") }),
      /^media-gateway: cannot start: DATA_DIR: cannot create or write the SQLite database in .*plain-file\/data \(ENOTDIR\); give the gateway's user write access there, or set DATA_DIR to a writable directory$/,
    );
  });

  it.concurrent("a short ADMIN_KEY, never shown", async () => {
    const result = await serve({ ADMIN_KEY: "tooshort-key" });
    expectOneLine(
      result,
      /^media-gateway: configuration error: invalid setting "adminKey" \(ADMIN_KEY\): must be at least 16 characters: set a longer key .*, or leave ADMIN_KEY unset/,
    );
    expect(result.stderr).not.toContain("tooshort-key");
  });

  it.concurrent("LOG_LEVEL=verbose", async () => {
    expectOneLine(
      await serve({ LOG_LEVEL: "verbose" }),
      /^media-gateway: configuration error: invalid setting "logLevel" \(LOG_LEVEL\): must be one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)$/,
    );
  });

  it.concurrent("a PORT that is not a port", async () => {
    expectOneLine(
      await serve({ PORT: "http" }),
      /^media-gateway: configuration error: invalid setting PORT: must be a whole number \(got "http"\)$/,
    );
    expectOneLine(
      await serve({ PORT: "70000" }),
      /^media-gateway: configuration error: invalid setting "port" \(PORT\): must be a whole number from 0 to 65535 \(got 70000\)$/,
    );
    expectOneLine(
      await serve({}, ["--port", "eighty"]),
      /^media-gateway: configuration error: invalid flag --port: must be a whole number \(got "eighty"\)$/,
    );
  });

  it.concurrent("shows the stack and the library's error with LOG_LEVEL=debug", async () => {
    const port = await refusedPort();
    const result = await serve({ DATABASE_URL: `postgres://gw@127.0.0.1:${port}/gateway`, LOG_LEVEL: "debug" });
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[0]).toMatch(/^media-gateway: cannot start: DATABASE_URL: /);
    expect(result.stderr).toMatch(/^\s+at /m);
    expect(result.stderr).toContain("ECONNREFUSED");
  });
});
