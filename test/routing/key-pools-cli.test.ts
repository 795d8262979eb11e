import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/cli/admin.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

const KEYS = ["cli-pool-key-aaaaaaaaaa-0001", "cli-pool-key-bbbbbbbbbb-0002", "cli-pool-key-cccccccccc-0003"];

for (const kind of ["sqlite", "postgres"] as const) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`channel keys and tags from the command line [${kind}]`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mg-pool-cli-"));
    let databaseUrl = `sqlite:${path.join(dir, "gateway.sqlite")}`;
    let drop: (() => Promise<void>) | null = null;

    beforeAll(async () => {
      if (kind === "postgres") {
        const db = await createTestDatabase();
        databaseUrl = db.url;
        drop = db.drop;
      }
    });
    afterAll(async () => {
      await drop?.();
      rmSync(dir, { recursive: true, force: true });
    });

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
          LOG_LEVEL: "warn",
        },
      });
      return { code, stdout, stderr };
    };
    const json = async (...args: string[]) => {
      const out = await cli(...args, "--json");
      expect(out.code, out.stderr).toBe(0);
      for (const key of KEYS) expect(out.stdout).not.toContain(key);
      return JSON.parse(out.stdout);
    };

    it("imports keys from a file, lists them masked, disables and removes them", async () => {
      const channel = await json(
        "channel",
        "create",
        "--name",
        "pooled",
        "--type",
        "gemini",
        "--base-url",
        "http://127.0.0.1:9",
        "--key",
        KEYS[0] as string,
        "--models",
        "gemini-2.5-flash",
        "--tags",
        "eu,pool",
        "--key-rotation",
        "random",
      );
      expect(channel.tags).toEqual(["eu", "pool"]);
      expect(channel.key_rotation).toBe("random");
      const file = path.join(dir, "keys.txt");
      writeFileSync(file, `${KEYS[1]}\n# a comment\n\n${KEYS[2]}\n${KEYS[0]}\n`);
      const added = await json("channel", "key-add", String(channel.id), "--file", file);
      expect(added.added).toHaveLength(2);
      expect(added.duplicates).toBe(1);
      const listed = await json("channel", "keys", String(channel.id));
      expect(listed.map((k: { key: string }) => k.key)).toEqual(["****0001", "****0002", "****0003"]);
      const human = await cli("channel", "keys", String(channel.id));
      for (const key of KEYS) expect(human.stdout).not.toContain(key);
      const off = await json("channel", "key-disable", String(channel.id), String(listed[1].id));
      expect(off.state).toBe("disabled");
      await json("channel", "key-remove", String(channel.id), String(listed[1].id));
      expect((await json("channel", "keys", String(channel.id))).length).toBe(2);
      const missing = await cli("channel", "key-add", String(channel.id));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("--file");
    });

    it("changes every channel of a tag at once", async () => {
      await json(
        "channel",
        "create",
        "--name",
        "other",
        "--type",
        "gemini",
        "--base-url",
        "http://127.0.0.1:9",
        "--key",
        "cli-other-key-0123456789",
        "--models",
        "gemini-2.5-flash",
        "--tags",
        "pool",
      );
      expect(await json("channel", "tags")).toEqual([
        { tag: "eu", channels: 1 },
        { tag: "pool", channels: 2 },
      ]);
      const changed = await json("channel", "tag", "pool", "--status", "disabled", "--priority", "5");
      expect(changed).toHaveLength(2);
      expect(
        changed.every((c: { status: string; priority: number }) => c.status === "disabled" && c.priority === 5),
      ).toBe(true);
      const bad = await cli("channel", "tag", "pool", "--status", "gone");
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--status");
      const unknown = await cli("channel", "tag", "none-such", "--status", "enabled");
      expect(unknown.code).toBe(3);
    });
  });
}
