import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminKeyHashSource, resolveAdminKeyHash } from "../../src/auth/admin-key.js";
import { runAdminCommand } from "../../src/cli/admin.js";
import { sha256Hex } from "../../src/core/ids.js";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { Settings } from "../../src/store/settings.js";
import { startTestGateway } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";

const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

for (const kind of ["sqlite", "postgres"] as const) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`admin command line [${kind}]`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mg-admin-cli-"));
    let databaseUrl = `sqlite:${path.join(dir, "gateway.sqlite")}`;
    let drop: (() => Promise<void>) | null = null;
    let store: Store;

    const env = (extra: Record<string, string> = {}) => ({
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dir,
      ADMIN_KEY: "",
      CONFIG_FILE: "",
      LOG_LEVEL: "warn",
      ...extra,
    });
    /** The command line as a separate process, exactly as an operator runs it. */
    const spawned = async (args: string[], extra: Record<string, string> = {}): Promise<Outcome> => {
      try {
        const { stdout, stderr } = await run("node", ["bin/media-gateway.mjs", "admin", ...args], {
          env: env(extra),
          cwd: process.cwd(),
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    /**
     * The same command in this process (starting a process per command would make this file
     * slow); `spawned` covers what only a real process shows: exit codes and the streams.
     */
    const cli = async (args: string[], extra: Record<string, string> = {}): Promise<Outcome> => {
      let stdout = "";
      let stderr = "";
      const code = await runAdminCommand(args, {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
        env: env(extra),
      });
      return { code, stdout, stderr };
    };
    /** Runs a command that must succeed and returns its --json output. */
    const json = async (...args: string[]) => {
      const out = await cli([...args, "--json"]);
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout);
    };
    const count = async (table: "users" | "tokens" | "channels" | "ledger" | "prices") =>
      Number(
        (
          await store.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const counts = async () => ({
      users: await count("users"),
      tokens: await count("tokens"),
      channels: await count("channels"),
      ledger: await count("ledger"),
      prices: await count("prices"),
    });

    beforeAll(async () => {
      if (kind === "postgres") {
        const db = await createTestDatabase();
        databaseUrl = db.url;
        drop = db.drop;
      }
      store = openStore(databaseUrl);
      await migrateToLatest(store);
    });
    afterAll(async () => {
      await store?.close();
      await drop?.();
      rmSync(dir, { recursive: true, force: true });
    });

    it("checks every flag before it writes anything", async () => {
      const before = await counts();
      const carol = await spawned(["user", "create", "--name", "carol", "--quota", "abc"]);
      expect(carol.code).toBe(2);
      expect(carol.stderr).toMatch(
        /^--quota must be a whole number, not "abc"\nusage: media-gateway admin user create/,
      );
      expect(await counts()).toEqual(before);
      const cases: [string[], RegExp][] = [
        [["user", "create", "--name", "carol", "--quota", "abc"], /--quota must be a whole number/],
        [["user", "create", "--quota", "5"], /--name is required/],
        [
          [
            "channel",
            "create",
            "--name",
            "c",
            "--type",
            "gemini",
            "--base-url",
            "ftp://x",
            "--key",
            "k",
            "--models",
            "m",
          ],
          /--base-url/,
        ],
        [
          [
            "channel",
            "create",
            "--name",
            "c",
            "--type",
            "nope",
            "--base-url",
            "http://x",
            "--key",
            "k",
            "--models",
            "m",
          ],
          /--type must be one of task-relay, generate-record, gemini, openai-images/,
        ],
        [["price", "set", "content", "m", "--cached-ratio", "2"], /--cached-ratio/],
        [["user", "topup", "--user", "1", "--amount", "0"], /--amount/],
      ];
      for (const [args, message] of cases) {
        const out = await cli(args);
        expect(out.code, args.join(" ")).toBe(2);
        expect(out.stderr).toMatch(message);
        expect(out.stderr).toContain("usage: media-gateway admin");
        expect(out.stdout).toBe("");
      }
      expect(await counts()).toEqual(before);
    });

    it("prints usage, not a stack, on an unknown or mistyped flag or command", async () => {
      for (const args of [
        ["user", "create", "--name", "carol", "--quta", "5"],
        ["token", "create", "--user", "1", "--name", "t", "--model", "x"],
        ["channel", "list", "--verbose"],
        ["user", "create", "--name"],
        ["user", "show", "abc"],
        ["user", "frobnicate"],
      ]) {
        const out = await cli(args);
        expect(out.code, args.join(" ")).toBe(2);
        expect(out.stderr).toMatch(/usage: media-gateway admin/);
        expect(out.stderr).not.toMatch(/TypeError|\n\s+at /);
      }
      const mistyped = await spawned(["user", "create", "--name", "carol", "--quta", "5"]);
      expect(mistyped.code).toBe(2);
      expect(mistyped.stderr).toContain("unknown option '--quta'");
      expect(mistyped.stderr).not.toMatch(/TypeError|\n\s+at /);
      expect(await count("users")).toBe(0);
      const help = await spawned(["--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Exit codes: 0 done, 1 failure .*2 usage.*\n.*3 not found, 4 conflict/);
    });

    it("exits 1 with one line when the store cannot be reached", async () => {
      const out = await cli(["user", "list"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/^admin command failed: [^\n]+\n$/);
    });

    it("stores a change even when Redis cannot be reached to announce it, and says so", async () => {
      const out = await cli(["price", "set", "image", "redis-down", "--price", "0.1"], {
        REDIS_URL: "redis://127.0.0.1:1",
      });
      expect(out.code).toBe(0);
      expect(out.stderr).toMatch(/^note: the change is stored, but running gateways could not be told through Redis/);
      expect(await json("price", "show", "image", "redis-down")).toMatchObject({ price: 0.1 });
    });

    it("lists, shows, updates, disables and deletes users and tokens", async () => {
      const carol = await json("user", "create", "--name", "carol", "--quota", "5000");
      expect(carol).toMatchObject({ name: "carol", quota: 5000, status: "enabled" });
      expect(carol.webhook_secret).toMatch(/^whsec_/);
      const id = String(carol.id);
      expect((await json("user", "list")).map((u: { name: string }) => u.name)).toContain("carol");
      expect(await json("user", "update", id, "--group", "gold", "--name", "carol2")).toMatchObject({
        name: "carol2",
        group: "gold",
      });
      expect(await json("user", "topup", "--user", id, "--amount", "100", "--reference", "inv-1")).toMatchObject({
        applied: true,
        quota: 5100,
      });

      const token = await json("token", "create", "--user", id, "--name", "laptop", "--quota-limit", "900");
      expect(token.key).toMatch(/^sk-[0-9A-Za-z]{48}$/);
      const tid = String(token.id);
      const listed = await cli(["token", "list", "--user", id, "--json"]);
      expect(listed.stdout).not.toContain(token.key);
      expect(await json("token", "update", tid, "--quota-limit", "none", "--models", "a,b")).toMatchObject({
        quota_limit: null,
        models: ["a", "b"],
      });
      expect(await json("token", "disable", tid)).toMatchObject({ status: "disabled" });
      expect(await json("token", "show", tid)).toMatchObject({ status: "disabled" });
      expect(await json("token", "delete", tid)).toMatchObject({ status: "revoked" });
      const revoked = await cli(["token", "update", tid, "--name", "x"]);
      expect(revoked.code).toBe(4);
      expect(revoked.stderr).toMatch(/revoked/);

      expect(await json("user", "disable", id)).toMatchObject({ status: "disabled" });
      const second = await json("token", "create", "--user", id, "--name", "second");
      expect(await json("user", "delete", id)).toMatchObject({ status: "deleted", quota: 5100 });
      expect(await json("token", "show", String(second.id))).toMatchObject({ status: "revoked" });
      expect((await cli(["user", "update", id, "--name", "back"])).code).toBe(4);

      const missing = await spawned(["user", "show", "99999"]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain("No user 99999.");
      expect((await cli(["token", "delete", "99999"])).code).toBe(3);
    });

    it("lists, shows, updates, disables and deletes channels, never printing a key", async () => {
      const channel = await json(
        "channel",
        "create",
        "--name",
        "sim",
        "--type",
        "gemini",
        "--base-url",
        "http://127.0.0.1:4000",
        "--key",
        "cli-channel-secret",
        "--models",
        "gemini-2.5-flash,gemini-2.5-pro",
        "--price-ratio",
        "1.5",
      );
      expect(channel).toMatchObject({
        type: "gemini",
        price_ratio: 1.5,
        models: ["gemini-2.5-flash", "gemini-2.5-pro"],
      });
      const id = String(channel.id);
      const outputs = [
        await spawned(["channel", "list"]),
        await cli(["channel", "show", id]),
        await cli(["channel", "update", id, "--key", "cli-channel-secret-2", "--weight", "7"]),
      ];
      expect(await json("channel", "show", id)).toMatchObject({ weight: 7 });
      expect(await json("channel", "disable", id)).toMatchObject({
        status: "disabled",
        status_reason: "disabled by operator",
      });
      expect(await json("channel", "delete", id)).toEqual({ id: Number(id), deleted: true });
      expect((await cli(["channel", "show", id])).code).toBe(3);
      for (const out of outputs) {
        expect(out.code).toBe(0);
        expect(out.stdout + out.stderr).not.toContain("cli-channel-secret");
      }
      expect(outputs[0]?.stdout).toMatch(/^id\s+name\s+type\s+status\s+base_url\n/);
    });

    it("lists, shows, sets, updates and deletes prices", async () => {
      const missing = await cli(["price", "set", "content", "cli-model", "--input-per-million", "0.4"]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("output_per_million is required for a token price");
      const perCall = await cli(["price", "set", "task", "audioa:CLI", "--price", "1", "--reasoning-per-million", "2"]);
      expect(perCall.code).not.toBe(0);
      expect(perCall.stderr).toContain("reasoning_per_million is not a rate of a price per call");
      expect(
        await json("price", "set", "content", "cli-model", "--input-per-million", "0.4", "--output-per-million", "1.6"),
      ).toMatchObject({
        kind: "content",
        name: "cli-model",
        unit: "tokens",
        input_per_million: 0.4,
        cache_read_per_million: null,
        cached_ratio: 1,
      });
      // Empty rates are printed as what they fall back to, never as 0.
      const listed = (await cli(["price", "list"])).stdout.split("\n").find((l) => l.includes("cli-model")) ?? "";
      expect(listed).toContain("input 0.4, output 1.6, cache_read = input, cache_write_5m = input");
      expect(listed).toContain("cache_write_1h = cache_write_5m");
      expect(listed).toContain("reasoning = output");
      expect(await json("price", "update", "content", "cli-model", "--cached-ratio", "0.25")).toMatchObject({
        input_per_million: 0.4,
        cache_read_per_million: 0.1,
        cached_ratio: 0.25,
      });
      expect(await json("price", "list")).toContainEqual(expect.objectContaining({ name: "cli-model" }));
      expect(await json("price", "show", "content", "cli-model")).toMatchObject({ cached_ratio: 0.25 });
      expect(await json("price", "delete", "content", "cli-model")).toEqual({
        kind: "content",
        name: "cli-model",
        deleted: true,
      });
      expect((await cli(["price", "show", "content", "cli-model"])).code).toBe(3);
      expect((await cli(["price", "show", "video", "x"])).code).toBe(2);
    });

    it("resets a lost admin key: printed once, only its hash stored, seen by a running gateway's next read", async () => {
      const before = await resolveAdminKeyHash(new Settings(store.db), null);
      let now = 1_000_000;
      const current = adminKeyHashSource(new Settings(store.db), null, before.hash, 10_000, () => now);

      const refused = await cli(["key", "reset"], { ADMIN_KEY: "an-admin-key-from-the-environment-0123" });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/ADMIN_KEY is set/);
      expect((await resolveAdminKeyHash(new Settings(store.db), null)).hash).toBe(before.hash);

      const out = await spawned(["key", "reset"]);
      expect(out.code, out.stderr).toBe(0);
      const key = /admin key: (adm-[0-9A-Za-z]{48})/.exec(out.stdout)?.[1] ?? "";
      expect(key).not.toBe("");
      const settings = JSON.stringify(await store.db.selectFrom("settings").selectAll().execute());
      expect(settings).not.toContain(key);
      expect(settings).toContain(sha256Hex(key));

      expect(await current()).toBe(before.hash);
      now += 10_000;
      expect(await current()).toBe(sha256Hex(key));
    });
  });
}

describe.skipIf(!HAS_REDIS)("admin command line and running gateways", () => {
  it("tells running gateways through Redis, so a token disabled from the command line is refused at once", async () => {
    const prefix = uniqueRedisPrefix();
    const gw = await startTestGateway("sqlite", { redisUrl: REDIS_URL, redisKeyPrefix: prefix });
    try {
      const { key, tokenId } = await gw.createUser();
      // The token is now in the gateway's cache, which alone would keep it for a minute.
      await gw.gateway.ctx.auth.authenticate(key, "127.0.0.1");
      let stderr = "";
      const code = await runAdminCommand(["token", "disable", String(tokenId)], {
        stdout: { write: () => true },
        stderr: { write: (t: string) => (stderr += t) },
        env: {
          ...process.env,
          DATABASE_URL: gw.gateway.ctx.config.databaseUrl,
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          ADMIN_KEY: "",
          CONFIG_FILE: "",
        },
      });
      expect(code, stderr).toBe(0);
      expect(stderr).toBe("");
      const deadline = Date.now() + 2000;
      let refused = false;
      while (!refused && Date.now() < deadline) {
        refused = await gw.gateway.ctx.auth.authenticate(key, "127.0.0.1").then(
          () => false,
          (err) => err.code === "token_disabled",
        );
        if (!refused) await new Promise((r) => setTimeout(r, 20));
      }
      expect(refused).toBe(true);
    } finally {
      await gw.close();
    }
  });
});
