import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MAIN = path.join(ROOT, "dist", "main.js");
const ADMIN_KEY = "cli-admin-key-0123456789abcdef";
/** Each case starts a whole process: slow on a busy machine. */
const PROCESS_TIMEOUT = { timeout: 120_000 };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mg-cli-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The gateway's own command line, as an operator runs it. */
function serve(args: string[], env: Record<string, string>): ChildProcess {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|CONFIG_FILE|PORT|DATA_DIR|ADMIN_KEY)$/.test(k)),
  );
  return spawn(process.execPath, [MAIN, "serve", ...args], {
    cwd: ROOT,
    env: { ...clean, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", SHUTDOWN_DELAY_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stderr })));
}

/** Resolves with the listen URL once the gateway logs that it is listening. */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (const line of buffer.split("\n")) {
        if (line.includes('"gateway listening"')) resolve(JSON.parse(line).url as string);
      }
    });
    child.on("exit", (code) => reject(new Error(`the gateway exited with ${code} before listening`)));
  });
}

describe("serve --config", () => {
  it("stops start-up with a non-zero exit and a message naming the bad setting", PROCESS_TIMEOUT, async () => {
    const file = path.join(dir, "bad.yaml");
    writeFileSync(file, "tasks:\n  timeoutSeconds: -5\n");
    const { code, stderr } = await exited(serve(["--config", file], { DATA_DIR: path.join(dir, "bad-data") }));
    expect(code).not.toBe(0);
    expect(stderr).toContain('invalid setting "tasks.timeoutSeconds"');
    expect(stderr).toContain("bad.yaml");
  });

  it("reads the file named by CONFIG_FILE when no flag is given", PROCESS_TIMEOUT, async () => {
    const file = path.join(dir, "unknown.json");
    writeFileSync(file, JSON.stringify({ images: { maxImageByte: 10 } }));
    const { code, stderr } = await exited(serve([], { CONFIG_FILE: file, DATA_DIR: path.join(dir, "env-data") }));
    expect(code).not.toBe(0);
    expect(stderr).toContain('invalid setting "images.maxImageByte": unknown setting');
  });
});

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`serve --config with a good file [${kind}]`, () => {
    it("starts and serves the configured prices", PROCESS_TIMEOUT, async () => {
      const file = path.join(dir, `good-${kind}.yaml`);
      writeFileSync(
        file,
        "prices:\n  - {kind: image, name: image-model, price: 0.5}\ngroupRatios:\n  partner: 0.5\ntasks:\n  timeoutSeconds: 600\n",
      );
      const db = kind === "postgres" ? await createTestDatabase() : null;
      const child = serve(["--config", file], {
        DATA_DIR: path.join(dir, `good-data-${kind}`),
        ADMIN_KEY,
        ...(db ? { DATABASE_URL: db.url } : {}),
      });
      const done = exited(child);
      try {
        const url = await listening(child);
        const res = await fetch(`${url}/api/admin/prices`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        const body = (await res.json()) as { data: { kind: string; name: string; price: number }[] };
        expect(body.data).toContainEqual(expect.objectContaining({ kind: "image", name: "image-model", price: 0.5 }));
        const ratios = await fetch(`${url}/api/admin/group-ratios`, { headers: { "x-admin-key": ADMIN_KEY } });
        expect(((await ratios.json()) as { data: unknown[] }).data).toContainEqual({ group: "partner", ratio: 0.5 });
      } finally {
        child.kill("SIGTERM");
        expect((await done).code).toBe(0);
        await db?.drop();
      }
    });
  });
}
