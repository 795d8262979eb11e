import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(os.tmpdir(), "mg-cli-"));
const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: "", ADMIN_KEY: "", LOG_LEVEL: "warn" };
const cli = (...args: string[]) =>
  run(process.execPath, ["bin/media-gateway.mjs", ...args], { env, cwd: process.cwd() });

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("command line", () => {
  it("bootstraps a user, a top-up, a token and a channel on the configured store without HTTP", async () => {
    const user = JSON.parse(
      (await cli("admin", "user", "create", "--name", "alice", "--quota", "5000", "--json")).stdout,
    );
    expect(user).toMatchObject({ id: 1, name: "alice", quota: 5000 });
    const topup = JSON.parse((await cli("admin", "user", "topup", "--user", "1", "--amount", "1000", "--json")).stdout);
    expect(topup).toMatchObject({ applied: true, quota: 6000 });
    const token = JSON.parse(
      (await cli("admin", "token", "create", "--user", "1", "--name", "laptop", "--json")).stdout,
    );
    expect(token.key).toMatch(/^sk-[0-9A-Za-z]{48}$/);
    const channel = JSON.parse(
      (
        await cli(
          "admin",
          "channel",
          "create",
          "--name",
          "sim",
          "--type",
          "gemini",
          "--base-url",
          "http://127.0.0.1:4000",
          "--key",
          "channel-secret",
          "--models",
          "gemini-2.5-flash,gemini-2.5-pro",
          "--json",
        )
      ).stdout,
    );
    expect(channel).toMatchObject({ id: 1, type: "gemini", models: ["gemini-2.5-flash", "gemini-2.5-pro"] });
    expect(JSON.stringify(channel)).not.toContain("channel-secret");
  });

  it("gives a user a credit line at creation", async () => {
    const user = JSON.parse(
      (await cli("admin", "user", "create", "--name", "carol", "--credit-line", "250000", "--json")).stdout,
    );
    expect(user).toMatchObject({ name: "carol", quota: 0, credit_line: 250000 });
    const err = await cli("admin", "user", "create", "--name", "dave", "--credit-line", "lots").catch((e) => e);
    expect(err.code).toBe(2);
    expect(err.stderr).toContain("--credit-line must be a whole number");
  });

  it("says what is wrong with a bad admin command and exits non-zero", async () => {
    const err = await cli("admin", "channel", "create", "--name", "x", "--type", "nope").catch((e) => e);
    expect(err.code).toBe(2);
    expect(err.stderr).toContain("--type must be one of");
  });

  it("serves, prints a generated admin key once, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, ["bin/media-gateway.mjs", "serve", "--port", "0"], {
      env: { ...env, DATA_DIR: path.join(dir, "serve"), LOG_LEVEL: "info", SHUTDOWN_DELAY_MS: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
          if (m?.[1]) {
            clearInterval(timer);
            resolve(m[1]);
          }
        }, 50);
        void exit.then(() => {
          clearInterval(timer);
          reject(new Error(`exited early: ${stderr}`));
        });
      });
      expect(stderr).toMatch(/admin key: adm-[0-9A-Za-z]{48}/);
      const key = /admin key: (adm-\S+)/.exec(stderr)?.[1] ?? "";
      expect(stdout).not.toContain(key);
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
      const users = await fetch(`${url}/api/admin/users`, { headers: { authorization: `Bearer ${key}` } });
      expect(users.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
  });
});
