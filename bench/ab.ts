/**
 * Two builds of the gateway side by side, loaded in alternating rounds against the minimal
 * upstream, so that a slow or fast spell of a shared machine falls on both: the way to tell a
 * change of a few percent from noise. Each build runs its compiled dist/ (built here when stale)
 * through bench/gateway-entry.mjs, on SQLite by default, with access logs at `info` to a file.
 *
 *   node --import tsx bench/ab.ts --a <checkout> --b <checkout> [--phase generate|stream|chat|image]
 *        [--rounds 6] [--duration 3] [--warmup 1] [--connections 32] [--pg]
 *        [--a-node="<node flags>"] [--b-node="<node flags>"]
 *
 * `--a-node` / `--b-node` give a build's gateway process node flags of its own (a V8 heap setting,
 * say), so that one checkout can be set against itself.
 *
 * Printed: each round's server CPU per answered request, rate and p99 for A and B, then the medians,
 * B's CPU per request against A's, and each gateway's highest RSS over the whole run.
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createTemporaryDatabase, provisionGateway } from "./gateway-setup.js";
import { type LoadRequest, type LoadResult, loadTarget, median } from "./load.js";
import { ChildProcesses, memoryOf } from "./processes.js";
import { CHAT_MODEL, chatRequest, geminiRequest, IMAGE_MODEL, imageRequest, MODEL, UPSTREAM_KEY } from "./scenarios.js";
import { buildIfStale } from "./tasks-submit-load.js";

const ROOT = path.resolve(import.meta.dirname, "..");

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      a: { type: "string" },
      b: { type: "string" },
      phase: { type: "string", default: "generate" },
      rounds: { type: "string", default: "6" },
      duration: { type: "string", default: "3" },
      warmup: { type: "string", default: "1" },
      connections: { type: "string", default: "32" },
      pg: { type: "boolean", default: false },
      "a-node": { type: "string", default: "" },
      "b-node": { type: "string", default: "" },
    },
  });
  if (!values.a || !values.b) throw new Error("--a and --b (two checkouts of the gateway) are required");
  const phase = values.phase as "generate" | "stream" | "chat" | "image";
  if (!["generate", "stream", "chat", "image"].includes(phase)) {
    throw new Error("--phase: generate, stream, chat or image");
  }
  const roots = { A: path.resolve(values.a), B: path.resolve(values.b) };
  const nodeFlags = {
    A: values["a-node"].split(/\s+/).filter(Boolean),
    B: values["b-node"].split(/\s+/).filter(Boolean),
  };
  const settings = {
    connections: Number(values.connections),
    durationSeconds: Number(values.duration),
    warmupSeconds: Number(values.warmup),
  };
  const rounds = Number(values.rounds);

  const dir = mkdtempSync(path.join(os.tmpdir(), "gateway-ab-"));
  const children = new ChildProcesses();
  const drops: (() => Promise<void>)[] = [];
  try {
    const upstream = await children.start({
      name: "minimal upstream",
      args: ["--import", "tsx", path.join(ROOT, "bench/minimal-upstream.ts")],
      cwd: ROOT,
      env: { ...process.env },
      logFile: path.join(dir, "upstream.log"),
      ready: { kind: "ipc" },
    });
    const adminKey = randomBytes(24).toString("hex");
    const targets: { name: "A" | "B"; pid: number; request: LoadRequest; results: LoadResult[] }[] = [];
    for (const name of ["A", "B"] as const) {
      const root = roots[name];
      buildIfStale(root);
      const dataDir = path.join(dir, name);
      mkdirSync(dataDir, { recursive: true });
      let databaseUrl = `sqlite:${path.join(dataDir, "gateway.sqlite")}`;
      if (values.pg) {
        const db = await createTemporaryDatabase("postgres://postgres@127.0.0.1:5432/postgres");
        drops.push(db.drop);
        databaseUrl = db.url;
      }
      const child = await children.start({
        name: `gateway ${name}`,
        args: [...nodeFlags[name], path.join(root, "bench/gateway-entry.mjs")],
        cwd: root,
        env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_DATA_DIR: dataDir, BENCH_ADMIN_KEY: adminKey },
        logFile: path.join(dataDir, "gateway.log"),
        ready: { kind: "ipc" },
      });
      const { token } = await provisionGateway(
        child.url,
        adminKey,
        { url: upstream.url, key: UPSTREAM_KEY },
        // An image phase leaves chat out: a build from before chat channels can be loaded too.
        phase === "image"
          ? { gemini: [MODEL, IMAGE_MODEL], chat: [], priced: [] }
          : { gemini: [MODEL], chat: [CHAT_MODEL], priced: [CHAT_MODEL] },
      );
      const request =
        phase === "chat"
          ? chatRequest(child.url, token)
          : phase === "image"
            ? imageRequest(child.url, token)
            : geminiRequest(child.url, token, phase === "stream");
      targets.push({ name, pid: child.pid, request, results: [] });
    }
    for (let round = 1; round <= rounds; round++) {
      // A then B on odd rounds, B then A on even ones: neither always follows the other.
      const order = round % 2 === 1 ? targets : [...targets].reverse();
      for (const t of order) {
        const r = await loadTarget(t.request, settings, [{ name: "server", pid: t.pid }]);
        t.results.push(r);
        const cpu = r.cpu?.[0]?.msPerRequest ?? Number.NaN;
        process.stdout.write(
          `round ${round} ${t.name}: ${(cpu * 1000).toFixed(0)} us/req, ${r.requestsPerSecond.toFixed(0)} req/s, p99 ${r.latencyMs.p99} ms, non2xx ${r.non2xx}, errors ${r.errors}\n`,
        );
      }
    }
    const cpuOf = (t: (typeof targets)[number]) => median(t.results.map((r) => (r.cpu?.[0]?.msPerRequest ?? 0) * 1000));
    const rateOf = (t: (typeof targets)[number]) => median(t.results.map((r) => r.requestsPerSecond));
    const p99Of = (t: (typeof targets)[number]) => median(t.results.map((r) => r.latencyMs.p99));
    const [a, b] = targets as [(typeof targets)[number], (typeof targets)[number]];
    process.stdout.write(
      `median A: ${cpuOf(a).toFixed(0)} us/req ${rateOf(a).toFixed(0)} req/s p99 ${p99Of(a)} ms; B: ${cpuOf(b).toFixed(0)} us/req ${rateOf(b).toFixed(0)} req/s p99 ${p99Of(b)} ms; B/A CPU ${(cpuOf(b) / cpuOf(a)).toFixed(3)}\n`,
    );
    const rss = (t: (typeof targets)[number]) => {
      const m = memoryOf(t.pid);
      return m ? `${m.peakRssMiB.toFixed(0)} MiB highest, ${m.rssMiB.toFixed(0)} now` : "n/a";
    };
    process.stdout.write(`RSS A: ${rss(a)}; B: ${rss(b)}\n`);
  } finally {
    await children.stopAll();
    for (const drop of drops) await drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
