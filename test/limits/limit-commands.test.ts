import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/cli/admin.js";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as const) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`admin limit commands [${kind}]`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mg-limit-cli-"));
    let databaseUrl = `sqlite:${path.join(dir, "gateway.sqlite")}`;
    let drop: (() => Promise<void>) | null = null;
    let store: Store;

    const cli = async (...args: string[]) => {
      let stdout = "";
      let stderr = "";
      const code = await runAdminCommand(args, {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          DATA_DIR: dir,
          ADMIN_KEY: "",
          CONFIG_FILE: "",
          REDIS_URL: "",
        },
      });
      return { code, stdout, stderr };
    };
    const rows = () => store.db.selectFrom("rate_limits").selectAll().orderBy("scope").execute();

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

    it("sets, lists and removes limits of a user, a group's tokens and a model", async () => {
      expect((await cli("limit", "set", "user", "12", "--rpm", "60", "--tpm", "100000")).code).toBe(0);
      expect((await cli("limit", "set", "token", "--group", "free", "--rpm", "10")).code).toBe(0);
      expect((await cli("limit", "set", "model", "gpt-x", "--tpm", "5000")).code).toBe(0);
      // Setting again replaces; none clears one limit.
      expect((await cli("limit", "set", "user", "12", "--rpm", "none", "--tpm", "200000")).code).toBe(0);
      const listed = await cli("limit", "list", "--json");
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([
        { scope: "model", subject: "gpt-x", group: "", requestsPerMinute: null, tokensPerMinute: 5000 },
        { scope: "token", subject: "", group: "free", requestsPerMinute: 10, tokensPerMinute: null },
        { scope: "user", subject: "12", group: "", requestsPerMinute: null, tokensPerMinute: 200000 },
      ]);
      expect((await cli("limit", "remove", "token", "--group", "free")).code).toBe(0);
      expect((await rows()).map((r) => r.scope)).toEqual(["model", "user"]);
    });

    it("refuses a limit without a subject or group, and an unknown one to remove, writing nothing", async () => {
      const before = (await rows()).length;
      const bare = await cli("limit", "set", "user", "--rpm", "5");
      expect(bare.code).not.toBe(0);
      expect(bare.stderr).toContain("subject");
      const scope = await cli("limit", "set", "team", "1", "--rpm", "5");
      expect(scope.code).not.toBe(0);
      expect(scope.stderr).toContain("token, user or model");
      const zero = await cli("limit", "set", "user", "4", "--rpm", "0");
      expect(zero.code).not.toBe(0);
      const missing = await cli("limit", "remove", "user", "999");
      expect(missing.code).not.toBe(0);
      expect((await rows()).length).toBe(before);
    });
  });
}
