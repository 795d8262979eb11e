import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../../src/app/gateway.js";
import { loadConfig } from "../../src/config/load.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { openStore } from "../../src/store/database.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN_KEY = "graceful-stop-admin-key-0123456789";
const UPSTREAM_KEY = "sim-upstream-key";
/** Short, so that the test does not wait long; the stream below lasts far longer. */
const DRAIN_MS = 1500;

let dir: string;
let sim: Simulator;
let token: string;

/** Seeds a user, a token and channels into the store the process will open, then lets go of it. */
async function seed(databaseUrl: string) {
  const config = loadConfig({}, { dataDir: dir, databaseUrl, adminKey: ADMIN_KEY, logLevel: "silent" });
  const gateway = await buildGateway(config);
  const { ctx } = gateway;
  const user = await ctx.users.create({ name: "drain" });
  await ctx.ledger.topUp(Number(user.id), 100 * config.quotaPerUnit, "topup:drain", "test quota");
  token = (await ctx.tokens.create({ userId: Number(user.id), name: "drain" })).key;
  await ctx.channels.create({
    name: "tasks",
    type: "task-relay",
    baseUrl: sim.url,
    key: UPSTREAM_KEY,
    models: ["audioa"],
  });
  await ctx.channels.create({
    name: "content",
    type: "gemini",
    baseUrl: sim.url,
    key: UPSTREAM_KEY,
    models: ["gemini-2.5-flash"],
  });
  await gateway.close(0);
}

/** The image's CMD: `node dist/main.js serve`, compiled JavaScript on plain node. */
function serve(databaseUrl: string): ChildProcess {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(CONFIG_FILE|REDIS_URL|ROLE|TRUST_PROXY)$/.test(k)),
  );
  return spawn(process.execPath, ["dist/main.js", "serve"], {
    cwd: ROOT,
    env: {
      ...env,
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: dir,
      DATABASE_URL: databaseUrl,
      ADMIN_KEY,
      LOG_LEVEL: "info",
      SHUTDOWN_DELAY_MS: "0",
      SHUTDOWN_GRACE_MS: String(DRAIN_MS),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mg-drain-"));
  sim = await startSimulator({ keys: [UPSTREAM_KEY], taskRelay: { latencyMs: 600, completeAfterMs: 60_000 } });
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(condition: () => boolean, what: string) {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

describe("a container stop (SIGTERM to node dist/main.js serve)", () => {
  it("answers the submit in flight, ends the content and chat streams open at the end of the drain window with an error event and settles them, and exits 0", async () => {
    const databaseUrl = `sqlite:${path.join(dir, "gateway.sqlite")}`;
    await seed(databaseUrl);
    const child = serve(databaseUrl);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    try {
      await until(() => stdout.includes('"gateway listening"'), `the gateway listening (stderr: ${stderr})`);
      const url = /"url":"(http:\/\/[^"]+)"/.exec(stdout)?.[1] ?? "";

      // A stream of 40 chunks, 200 ms apart: far longer than the drain window.
      const stream = await fetch(`${url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
        method: "POST",
        headers: { "x-goog-api-key": token, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "[slow] [chunks=40] a long answer" }] }] }),
      });
      expect(stream.status).toBe(200);
      const requestId = stream.headers.get("x-request-id") ?? "";
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      let received = "";
      const first = await reader.read();
      received += new TextDecoder().decode(first.value);
      expect(received).toContain("data: ");

      // A chat stream over the same upstream, as long.
      const chat = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "gemini-2.5-flash",
          stream: true,
          messages: [{ role: "user", content: "[slow] [chunks=40] a long chat answer" }],
        }),
      });
      expect(chat.status).toBe(200);
      const chatRequestId = chat.headers.get("x-request-id") ?? "";
      const chatText = chat.text();

      // A task submit that the upstream answers only after 600 ms.
      const submit = fetch(`${url}/audioa/submit/MUSIC`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ gpt_description_prompt: "a song for a closing shop", mv: "chirp-v3-5" }),
      });
      await until(
        () => sim.received.some((r) => r.protocol === "task-relay" && r.method === "POST"),
        "the submit reaching the upstream",
      );

      child.kill("SIGTERM");

      // The submit in flight is answered in full.
      const answer = await submit;
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ code: "success", data: expect.stringMatching(/^task_/) });

      // The stream goes on until the window ends, then ends cleanly with an error event saying why.
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += new TextDecoder().decode(value);
      }
      const events = received.split(/\r?\n\r?\n/).filter((e) => e.startsWith("data: "));
      expect(events.length).toBeGreaterThan(2);
      expect(events.length).toBeLessThan(40);
      const last = JSON.parse(events.at(-1)?.slice("data: ".length) ?? "{}");
      expect(last).toMatchObject({ error: { code: 503, status: "UNAVAILABLE" } });
      expect(last.error.message).toContain("shutting down");
      // The chat stream ends the same way, in its own surface's shape, with no [DONE].
      const chatEvents = (await chatText).split(/\r?\n\r?\n/).filter((e) => e.startsWith("data: "));
      expect(chatEvents.length).toBeGreaterThan(2);
      expect(chatEvents.at(-1)).not.toBe("data: [DONE]");
      const chatLast = JSON.parse(chatEvents.at(-1)?.slice("data: ".length) ?? "{}");
      expect(chatLast).toMatchObject({ error: { code: "shutting_down", type: "server_error" } });

      expect(await exited).toEqual({ code: 0, signal: null });
      expect(stdout).toContain('"shutting down"');
      expect(stdout).toContain('"drain window over, ending the streams and connections still open"');
      expect(stdout).toContain('"msg":"stopped"');

      // The cut stream is billed for what it produced: its charge is followed by a settlement.
      const store = openStore(databaseUrl);
      try {
        const rows = await store.db
          .selectFrom("ledger")
          .select(["kind", "amount"])
          .where("reference", "like", `%${requestId}%`)
          .execute();
        expect(rows.map((r) => r.kind).sort()).toEqual(["charge", "settle"]);
        const chatRows = await store.db
          .selectFrom("ledger")
          .select(["kind"])
          .where("reference", "=", `chat:${chatRequestId}`)
          .execute();
        expect(chatRows.map((r) => r.kind).sort()).toEqual(["charge", "settle"]);
      } finally {
        await store.close();
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
