import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/cli/admin.js";
import { openStore } from "../../src/store/database.js";

/** `media-gateway admin code ...` on a SQLite store, in this process. */
describe("the redemption code commands", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-code-cli-"));
    env = { DATA_DIR: dir, QUOTA_PER_UNIT: "1000" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = async (...args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runAdminCommand(args, {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env,
      stdin: new PassThrough(),
    });
    return { code, stdout, stderr };
  };

  it("generates, lists, exports once and disables", async () => {
    const made = await cli("code", "generate", "--count", "2", "--amount", "1.5", "--prefix", "vip", "--json");
    expect(made.code).toBe(0);
    const batch = JSON.parse(made.stdout);
    expect(batch).toMatchObject({ prefix: "VIP", quota: 1_500, amount: 1.5, count: 2, status: "enabled" });

    const batches = await cli("code", "batches", "--json");
    expect(JSON.parse(batches.stdout).map((b: { id: number }) => b.id)).toContain(batch.id);

    const listed = JSON.parse((await cli("code", "list", String(batch.id), "--json")).stdout);
    expect(listed).toHaveLength(2);
    expect(listed[0].code).toMatch(/^VIP-[0-9A-Z]{4}…[0-9A-Z]{4}$/);

    const exported = await cli("code", "export", String(batch.id));
    expect(exported.code).toBe(0);
    const lines = exported.stdout.trim().split("\r\n");
    expect(lines[0]).toBe("code,batch_id,quota,amount,expires_at");
    const codes = lines.slice(1).map((l) => l.split(",")[0] as string);
    expect(codes).toHaveLength(2);
    for (const code of codes) expect(code).toMatch(/^VIP(-[0-9A-Z]{5}){4}$/);

    const again = await cli("code", "export", String(batch.id));
    expect(again.code).toBe(4);
    expect(again.stderr).toContain("exported already");
    const store = openStore(`sqlite:${path.join(dir, "gateway.sqlite")}`);
    try {
      const rows = await store.db.selectFrom("redemption_codes").selectAll().execute();
      for (const code of codes) expect(JSON.stringify(rows)).not.toContain(code);
    } finally {
      await store.close();
    }

    const one = await cli("code", "disable", String(listed[0].id), "--json");
    expect(JSON.parse(one.stdout)).toMatchObject({ id: listed[0].id, status: "disabled" });
    const off = await cli("code", "disable-batch", String(batch.id), "--json");
    expect(JSON.parse(off.stdout)).toMatchObject({ id: batch.id, status: "disabled" });
  });

  it("refuses bad values before writing anything", async () => {
    const negative = await cli("code", "generate", "--count", "1", "--amount", "-2");
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain("--amount");
    const tooMany = await cli("code", "generate", "--count", "20000", "--quota", "5");
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain("--count");
    const both = await cli("code", "generate", "--count", "1", "--quota", "5", "--amount", "1");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("amount");
  });
});
