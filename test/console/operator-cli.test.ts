import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "../../src/auth/passwords.js";
import { runAdminCommand } from "../../src/cli/admin.js";
import { ConsoleAccounts } from "../../src/store/console-accounts.js";
import { openStore } from "../../src/store/database.js";

/** `media-gateway admin operator ...` on a SQLite store, in this process. */
describe("the operator commands", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-operator-cli-"));
    env = { DATA_DIR: dir, CONSOLE_PASSWORD_COST: "4" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = async (args: string[], stdinText?: string) => {
    let stdout = "";
    let stderr = "";
    const stdin = new PassThrough();
    if (stdinText !== undefined) stdin.end(stdinText);
    const code = await runAdminCommand(args, {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env,
      stdin,
    });
    return { code, stdout, stderr };
  };
  const storedHash = async (name: string) => {
    const store = openStore(`sqlite:${path.join(dir, "gateway.sqlite")}`);
    try {
      return (await new ConsoleAccounts(store.db).operatorByName(name))?.password_hash ?? null;
    } finally {
      await store.close();
    }
  };

  it("creates an operator with the password read from stdin, hashed, never printed", async () => {
    const out = await cli(["operator", "create", "--name", "ops", "--json"], "stdin password 1\nignored line\n");
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ name: "ops", status: "enabled" });
    expect(out.stdout + out.stderr).not.toContain("stdin password 1");
    const hash = (await storedHash("ops")) as string;
    expect(hash).toMatch(/^scrypt\$4\$8\$1\$/);
    expect(await verifyPassword("stdin password 1", hash)).toBe(true);
  });

  it("reads the password from the first line of --password-file", async () => {
    const file = path.join(dir, "pw");
    writeFileSync(file, "file password 22\n");
    expect((await cli(["operator", "create", "--name", "from-file", "--password-file", file])).code).toBe(0);
    expect(await verifyPassword("file password 22", (await storedHash("from-file")) as string)).toBe(true);
  });

  it("refuses a short password, a taken name and a missing name, writing nothing", async () => {
    const short = await cli(["operator", "create", "--name", "weak"], "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 10 characters");
    expect(await storedHash("weak")).toBeNull();
    const taken = await cli(["operator", "create", "--name", "ops"], "another password\n");
    expect(taken.code).toBe(4);
    expect(taken.stderr).toContain('"ops" exists already');
    expect((await cli(["operator", "create"], "another password\n")).code).toBe(2);
    expect((await cli(["operator", "rename", "--name", "ops"])).code).toBe(2);
  });

  it("lists operators without their hashes and disables one", async () => {
    const list = await cli(["operator", "list", "--json"]);
    expect(list.code).toBe(0);
    const rows = JSON.parse(list.stdout);
    expect(rows.map((r: { name: string }) => r.name)).toEqual(["ops", "from-file"]);
    expect(list.stdout).not.toContain("scrypt");
    const disabled = await cli(["operator", "disable", "--name", "ops", "--json"]);
    expect(JSON.parse(disabled.stdout).status).toBe("disabled");
    expect((await cli(["operator", "disable", "--name", "nobody"])).code).toBe(3);
    expect((await cli(["operator", "enable", "--name", "ops", "--json"])).stdout).toContain('"enabled"');
  });
});
