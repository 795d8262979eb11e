import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/server.js";
import { openStore } from "../../src/store/database.js";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/connection.js";
import { StoreOwnedError } from "../../src/store/sqlite/owner-lock.js";
import { startTestGateway } from "../support/gateway.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(os.tmpdir(), "mg-owner-"));
const env = {
  ...process.env,
  DATA_DIR: dir,
  DATABASE_URL: "",
  ADMIN_KEY: "owner-test-admin-key-0123456789",
  LOG_LEVEL: "info",
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  exit: Promise<number | null>;
  stderr: () => string;
  /** The listening URL, or null when the process ended first. */
  url: Promise<string | null>;
}

/** `serve` as its own process on the shared DATA_DIR. */
function serve(): Started {
  const child = spawn("node", ["bin/media-gateway.mjs", "serve", "--port", "0"], {
    env,
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

describe("one owner per SQLite file", () => {
  it("refuses a second gateway on the same DATA_DIR naming the first one's pid; a dead owner blocks nothing", async () => {
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
  });

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
