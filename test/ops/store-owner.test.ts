import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/server.js";
import { openStore } from "../../src/store/database.js";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/connection.js";
import { StoreLinkedError } from "../../src/store/sqlite/database-file.js";
import { StoreOwnedError } from "../../src/store/sqlite/owner-lock.js";
import { startTestGateway } from "../support/gateway.js";

const run = promisify(execFile);
// Resolved: the refusals name the file by its one name, every symbolic link followed.
const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "mg-owner-")));
const env = {
  ...process.env,
  DATA_DIR: dir,
  DATABASE_URL: "",
  ADMIN_KEY: "owner-test-admin-key-0123456789",
  LOG_LEVEL: "info",
  SHUTDOWN_DELAY_MS: "0",
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** These tests start gateway processes one after another; each start takes seconds on a busy machine. */
const PROCESS_TEST_MS = 90_000;

interface Started {
  child: ChildProcess;
  exit: Promise<number | null>;
  stderr: () => string;
  /** The listening URL, or null when the process ended first. */
  url: Promise<string | null>;
}

/** `serve` as its own process on the shared DATA_DIR (or on what `settings` name instead). */
function serve(settings: Record<string, string> = {}): Started {
  const child = spawn("node", ["bin/media-gateway.mjs", "serve", "--port", "0"], {
    env: { ...env, ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c) => {
    stdout += c;
  });
  child.stderr?.on("data", (c) => {
    stderr += c;
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = new Promise<string | null>((resolve) => {
    const timer = setInterval(() => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
      if (m?.[1]) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 25);
    void exit.then(() => {
      clearInterval(timer);
      resolve(null);
    });
  });
  return { child, exit, stderr: () => stderr, url };
}

/** How a process that should be refused ended: its exit code, or "served" if it listened instead (it is then stopped). */
async function ending(started: Started): Promise<number | null | "served"> {
  if ((await started.url) === null) return started.exit;
  started.child.kill("SIGKILL");
  await started.exit;
  return "served";
}

describe("one owner per SQLite file", () => {
  it(
    "refuses a second gateway on the same DATA_DIR naming the first one's pid; a dead owner blocks nothing",
    async () => {
      const first = serve();
      try {
        expect(await first.url).not.toBeNull();

        const second = serve();
        expect(await second.exit).toBe(1);
        expect(await second.url).toBeNull();
        const lines = second.stderr().trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`pid ${first.child.pid}`);
        expect(lines[0]).toContain(path.join(dir, "gateway.sqlite"));

        // Admin commands still work against the file while the gateway owns it.
        const created = await run(
          "node",
          ["bin/media-gateway.mjs", "admin", "user", "create", "--name", "bob", "--json"],
          { env },
        );
        expect(JSON.parse(created.stdout)).toMatchObject({ name: "bob" });
      } finally {
        first.child.kill("SIGKILL");
      }
      await first.exit;

      // The owner died without cleaning up: the operating system dropped its lock.
      const third = serve();
      try {
        const url = await third.url;
        expect(url, third.stderr()).not.toBeNull();
        const users = await fetch(`${url}/api/admin/users`, { headers: { authorization: `Bearer ${env.ADMIN_KEY}` } });
        expect(((await users.json()) as { data: { name: string }[] }).data.map((u) => u.name)).toContain("bob");
      } finally {
        third.child.kill("SIGTERM");
      }
      expect(await third.exit).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it("refuses a second owner in the same process too, and frees the file when the first closes", async () => {
    const url = `sqlite:${path.join(dir, "in-process.sqlite")}`;
    const a = openStore(url, { owner: true });
    expect(() => openStore(url, { owner: true })).toThrow(StoreOwnedError);
    expect(() => openStore(url, { owner: true })).toThrow(`pid ${process.pid}`);
    // Not an owner (an admin command): opens.
    const reader = openStore(url);
    await reader.close();
    await a.close();
    const b = openStore(url, { owner: true });
    await b.close();
  });
});

describe("one owner per SQLite file, whatever the path", () => {
  it(
    "refuses a second gateway reaching the owner's file through a symlink to it, a symlink to its directory or a hard link; the owner keeps answering",
    async () => {
      const real = path.join(dir, "real");
      mkdirSync(real);
      const file = path.join(real, "gateway.sqlite");
      const linkedDir = path.join(dir, "linked-dir");
      symlinkSync(real, linkedDir);
      const fileLink = path.join(dir, "file-link.sqlite");
      symlinkSync(file, fileLink);
      const hardLink = path.join(dir, "hard-link.sqlite");

      const first = serve({ DATA_DIR: real });
      try {
        const url = await first.url;
        expect(url, first.stderr()).not.toBeNull();
        const throughFileLink = serve({ DATABASE_URL: `sqlite:${fileLink}` });
        const throughDirLink = serve({ DATA_DIR: linkedDir });
        const pid = first.child.pid;
        for (const [second, expected] of [
          [
            throughFileLink,
            `DATABASE_URL: the SQLite store ${file} (from DATABASE_URL=sqlite:${fileLink}) is in use by another gateway process (pid ${pid}); only one process may serve from one SQLite file, whatever path names it: stop that process first, or set DATABASE_URL to a file of its own`,
          ],
          [
            throughDirLink,
            `DATA_DIR: the SQLite store ${file} (from DATA_DIR=${linkedDir}) is in use by another gateway process (pid ${pid}); only one process may serve from one SQLite file, whatever path names it: stop that process first, or set DATA_DIR to a directory of its own`,
          ],
        ] as const) {
          expect(await ending(second)).toBe(1);
          const lines = second.stderr().trim().split("\n");
          expect(lines).toEqual([`media-gateway: cannot start: ${expected}`]);
        }

        // A hard link made while the owner serves: the second name is refused, whoever owns the file.
        linkSync(file, hardLink);
        const throughHardLink = serve({ DATABASE_URL: `sqlite:${hardLink}` });
        expect(await ending(throughHardLink)).toBe(1);
        const lines = throughHardLink.stderr().trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          new RegExp(
            `^media-gateway: cannot start: DATABASE_URL: the SQLite database file ${hardLink} \\(from DATABASE_URL=sqlite:${hardLink}\\) has 2 hard links, .*a SQLite database file must have one name: remove its other links`,
          ),
        );
        // Refused before SQLite opened it: no second write-ahead log, no lock beside the other name.
        expect(readdirSync(dir).filter((f) => f.startsWith("hard-link"))).toEqual(["hard-link.sqlite"]);

        // The owner keeps answering, reads and writes.
        const headers = { authorization: `Bearer ${env.ADMIN_KEY}`, "content-type": "application/json" };
        const created = await fetch(`${url}/api/admin/users`, {
          method: "POST",
          headers,
          body: JSON.stringify({ name: "carol" }),
        });
        expect(created.status).toBe(200);
        const users = await fetch(`${url}/api/admin/users`, { headers });
        expect(((await users.json()) as { data: { name: string }[] }).data.map((u) => u.name)).toContain("carol");
      } finally {
        first.child.kill("SIGTERM");
      }
      expect(await first.exit).toBe(0);
      unlinkSync(hardLink);
      const check = openSqlite(file, { readonly: true });
      try {
        expect(check.pragma("integrity_check")).toEqual([{ integrity_check: "ok" }]);
      } finally {
        check.close();
      }
    },
    PROCESS_TEST_MS,
  );

  it(
    "refuses at start a database file with two hard links, even with no other owner, and starts once it has one name",
    async () => {
      const own = path.join(dir, "two-names");
      mkdirSync(own);
      const file = path.join(own, "gateway.sqlite");
      const store = openStore(`sqlite:${file}`, { owner: true });
      await store.close();
      const other = path.join(dir, "copy-by-link.sqlite");
      linkSync(file, other);

      const refused = serve({ DATA_DIR: own });
      expect(await ending(refused)).toBe(1);
      const lines = refused.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(
        `media-gateway: cannot start: DATA_DIR: the SQLite database file ${file} (from DATA_DIR=${own}) has 2 hard links, and SQLite keeps a write-ahead log per name, so a second name corrupts the database; a SQLite database file must have one name:`,
      );
      // An admin command on either name is refused too: its write would go to a log of its own.
      expect(() => openStore(`sqlite:${other}`)).toThrow(StoreLinkedError);
      expect(() => openStore(`sqlite:${file}`)).toThrow(`${file} has 2 hard links`);
      expect(existsSync(`${other}-wal`)).toBe(false);

      unlinkSync(other);
      const started = serve({ DATA_DIR: own });
      try {
        expect(await started.url, started.stderr()).not.toBeNull();
      } finally {
        started.child.kill("SIGTERM");
      }
      expect(await started.exit).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it("in one process: one owner through any path, a database not created yet included", async () => {
    const real = path.join(dir, "in-process-real");
    mkdirSync(real);
    const file = path.join(real, "store.sqlite");
    const linkedDir = path.join(dir, "in-process-linked-dir");
    symlinkSync(real, linkedDir);
    // A symbolic link to a database not created yet: the first owner creates it through the link.
    const fileLink = path.join(dir, "in-process-link.sqlite");
    symlinkSync(file, fileLink);
    const owner = openStore(`sqlite:${fileLink}`, { owner: true });
    try {
      expect(existsSync(file)).toBe(true);
      expect(() => openStore(`sqlite:${file}`, { owner: true })).toThrow(
        `the SQLite store ${file} is in use by another gateway process (pid ${process.pid})`,
      );
      const throughDir = path.join(linkedDir, "store.sqlite");
      expect(() => openStore(`sqlite:${throughDir}`, { owner: true })).toThrow(
        `the SQLite store ${file} (named as ${throughDir}) is in use by another gateway process (pid ${process.pid})`,
      );
      const hardLink = path.join(dir, "in-process-hard.sqlite");
      linkSync(file, hardLink);
      expect(() => openStore(`sqlite:${hardLink}`, { owner: true })).toThrow(StoreLinkedError);
      unlinkSync(hardLink);
      // The owner's one log, named after the file itself, whatever path it was given.
      const sqlite = owner.sqlite as SqliteConnection;
      sqlite.exec("create table if not exists probe (n integer)");
      sqlite.prepare("insert into probe (n) values (?)").run(7);
      expect(sqlite.prepare("select sum(n) as s from probe").get()).toEqual({ s: 7 });
      expect(existsSync(`${file}-wal`)).toBe(true);
      expect(existsSync(`${fileLink}-wal`)).toBe(false);
    } finally {
      await owner.close();
    }
  });
});

describe("a busy SQLite file", () => {
  it("answers 503 with Retry-After in the surface's shape, never a 500, while another process holds the write lock", async () => {
    const sim = await startSimulator({ keys: ["sim-key"], gemini: { text: {} } });
    const gw = await startTestGateway("sqlite", { sqliteBusyTimeoutMs: 20 });
    let other: SqliteConnection | null = null;
    try {
      await gw.createChannel({
        type: "gemini",
        baseUrl: sim.url,
        key: "sim-key",
        models: ["gemini-2.5-flash", "image-model"],
      });
      const { key, userId } = await gw.createUser({ quota: 10_000_000 });
      const before = await gw.balance(userId);

      // Another process (an admin command, a backup tool) holds the write lock for longer than the wait.
      other = openSqlite(path.join(gw.dataDir, "gateway.sqlite"));
      other.exec("begin immediate");

      const topup = await gw.admin("POST", `/users/${userId}/topup`, { amount: 5 });
      expect(topup.status).toBe(503);
      expect(topup.body).toMatchObject({ code: "busy", data: null });

      const content = await fetch(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
        method: "POST",
        headers: { "x-goog-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      });
      expect(content.status).toBe(503);
      expect(content.headers.get("retry-after")).toBe("1");
      expect(await content.json()).toMatchObject({ error: { code: 503, status: "UNAVAILABLE" } });

      const image = await fetch(`${gw.url}/v1/images/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "image-model", prompt: "a lighthouse" }),
      });
      expect(image.status).toBe(503);
      expect(await image.json()).toMatchObject({ error: { type: "server_error", code: "busy" } });

      other.exec("rollback");
      // Once the lock is gone the same requests pass, and the refused ones changed nothing.
      expect(await gw.balance(userId)).toBe(before);
      expect((await gw.admin("POST", `/users/${userId}/topup`, { amount: 5 })).status).toBe(200);
      expect(await gw.balance(userId)).toBe(before + 5);
    } finally {
      other?.close();
      await gw.close();
      await sim.close();
    }
  });
});
