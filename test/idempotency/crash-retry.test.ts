import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";
import { chargesOf, post } from "./harness.js";

const ADMIN_KEY = "test-admin-key-0123456789abcdef";
const SIM_KEY = "sim-key";

/**
 * An upstream in front of the simulator that, while `holding`, keeps every request open without
 * answering (the upstream got it, the gateway waits), and otherwise passes requests through.
 */
async function startHoldingUpstream(target: string) {
  const held: string[] = [];
  const passed: string[] = [];
  const open = new Set<http.ServerResponse>();
  const state = { holding: true };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (state.holding) {
        held.push(req.url ?? "");
        open.add(res);
        return;
      }
      passed.push(req.url ?? "");
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === "string" && k !== "host" && k !== "content-length" && k !== "connection") headers[k] = v;
      }
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === "GET" ? undefined : Buffer.concat(chunks),
      });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    passed,
    state,
    close: () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `serve` as a process of its own, to be killed. */
async function startChildGateway(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn("node", ["bin/media-gateway.mjs", "serve", "--port", "0"], {
    env: { ...process.env, ADMIN_KEY, LOG_LEVEL: "info", ...env },
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
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
      if (m?.[1]) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 25);
    child.on("exit", () => {
      clearInterval(timer);
      reject(new Error(`gateway exited: ${stderr}`));
    });
  });
  return { child, url };
}

async function admin(url: string, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${url}/api/admin${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: any };
  if (res.status !== 200) throw new Error(`${method} ${urlPath}: ${JSON.stringify(json)}`);
  return json.data;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(
    `Idempotency-Key after a crash past the upstream send [${kind}]`,
    () => {
      let sim: Simulator;
      let upstream: Awaited<ReturnType<typeof startHoldingUpstream>>;
      let dir: string;
      let databaseUrl: string;
      let dropDb: (() => Promise<void>) | null = null;
      let survivor: TestGateway | null = null;

      beforeAll(async () => {
        sim = await startSimulator({ keys: [SIM_KEY] });
        upstream = await startHoldingUpstream(sim.url);
        dir = mkdtempSync(path.join(os.tmpdir(), "mg-crash-"));
        if (kind === "postgres") {
          const db = await createTestDatabase();
          databaseUrl = db.url;
          dropDb = db.drop;
        } else {
          databaseUrl = `sqlite:${path.join(dir, "gateway.sqlite")}`;
        }
      });
      afterAll(async () => {
        await survivor?.close();
        await upstream?.close();
        await sim?.close();
        if (dropDb) await dropDb();
        rmSync(dir, { recursive: true, force: true });
      });

      it("a retry after the owner died gets the task it created, or generates the images once: one charge per key", async () => {
        // The first instance: a short lease, so the retry below need not wait long for it to run out.
        const first = await startChildGateway({
          DATA_DIR: dir,
          DATABASE_URL: databaseUrl,
          IDEMPOTENCY_LEASE_MS: "300",
        });
        let killed = false;
        try {
          const user = await admin(first.url, "POST", "/users", { name: "crash", quota: 100_000_000 });
          const token = await admin(first.url, "POST", `/users/${user.id}/tokens`, { name: "t" });
          await admin(first.url, "POST", "/channels", {
            name: "relay",
            type: "task-relay",
            base_url: upstream.url,
            key: SIM_KEY,
            models: ["audioa"],
          });
          await admin(first.url, "POST", "/channels", {
            name: "images",
            type: "gemini",
            base_url: upstream.url,
            key: SIM_KEY,
            models: ["image-model"],
          });
          const taskKey = randomUUID();
          const imageKey = randomUUID();
          const taskBody = { gpt_description_prompt: "a song across a crash" };
          const imageBody = { model: "image-model", prompt: "a lighthouse across a crash" };
          // Both requests reach the upstream (charged before it), which holds them; then the instance dies.
          const lost = [
            post(first.url, token.key, "/audioa/submit/MUSIC", taskBody, { "Idempotency-Key": taskKey }),
            post(first.url, token.key, "/v1/images/generations", imageBody, { "Idempotency-Key": imageKey }),
          ].map((p) => p.catch((e: unknown) => e));
          for (let i = 0; i < 500 && upstream.held.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
          expect(upstream.held).toHaveLength(2);
          first.child.kill("SIGKILL");
          killed = true;
          await new Promise((resolve) => first.child.once("exit", resolve));
          // The task submit was answered (with its id) before the send; the image call was cut.
          const [lostTask, lostImage] = await Promise.all(lost);
          expect(lostTask).toMatchObject({ status: 200 });
          expect(lostImage).toBeInstanceOf(Error);
          upstream.state.holding = false;

          // Another instance on the same store (on SQLite the dead owner's lock is gone).
          survivor = await startTestGateway(kind, { logLevel: "warn" }, { databaseUrl, dataDir: dir });
          const before = await chargesOf(survivor, user.id);
          expect(before).toHaveLength(2);
          const [taskCharge, imageCharge] = [
            before.find((c) => c.reference.startsWith("task:")),
            before.find((c) => c.reference.startsWith("image:")),
          ];

          const task = await post(survivor.url, token.key, "/audioa/submit/MUSIC", taskBody, {
            "Idempotency-Key": taskKey,
          });
          expect(task.status, JSON.stringify(task.body)).toBe(200);
          // The first answer: the task the dead instance created and charged, not a second one.
          expect(`task:${task.body.data}`).toBe(taskCharge?.reference);
          expect(task.body.data).toBe((lostTask as { body: { data: string } }).body.data);

          const image = await post(survivor.url, token.key, "/v1/images/generations", imageBody, {
            "Idempotency-Key": imageKey,
          });
          expect(image.status, JSON.stringify(image.body)).toBe(200);
          expect(image.body.data).toHaveLength(1);

          // Replays answer the same, running nothing.
          const replay = await post(survivor.url, token.key, "/v1/images/generations", imageBody, {
            "Idempotency-Key": imageKey,
          });
          expect(replay.body).toEqual(image.body);
          expect(replay.headers.get("idempotent-replayed")).toBe("true");

          // One task submit reached the upstream in all; the image was generated once more.
          expect(upstream.passed.filter((u) => u.includes("generateContent"))).toHaveLength(1);
          expect(upstream.passed.filter((u) => !u.includes("generateContent") && !u.includes("fetch"))).toEqual([]);
          const tasks = await survivor.gateway.ctx.store.db
            .selectFrom("tasks")
            .select("task_id")
            .where("user_id", "=", user.id)
            .execute();
          expect(tasks).toHaveLength(1);

          // The dead attempt's image charge was refunded; the key's images are paid once.
          const rows = await survivor.gateway.ctx.ledger.entries(user.id, { limit: 100 });
          const imageNet = rows
            .filter((r) => r.reference.startsWith("image:"))
            .reduce((sum, r) => sum + Number(r.amount), 0);
          expect(imageNet).toBe(imageCharge?.amount);
          expect(rows.filter((r) => r.kind === "refund" && r.reference === imageCharge?.reference)).toHaveLength(1);
          expect(await survivor.balance(user.id)).toBe(100_000_000 + (taskCharge?.amount ?? 0) + imageNet);
        } finally {
          if (!killed) first.child.kill("SIGKILL");
        }
      });
    },
  );
}
