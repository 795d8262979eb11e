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
 * B's CPU per request against A's, and each gateway's highest RSS over the whole run. The rounds
 * are run in two halves, each with both gateways started afresh, A first in the first half and B
 * first in the second: a gateway started second was found to run a few percent faster.
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createTemporaryDatabase, provisionGateway } from "./gateway-setup.js";
import { type LoadResult, loadTarget, median } from "./load.js";
import { ChildProcesses, memoryOf, startMinimalUpstream } from "./processes.js";
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
    const upstream = await startMinimalUpstream(children, ROOT, path.join(dir, "upstream.log"));
    const adminKey = randomBytes(24).toString("hex");
    /** One gateway of each build: started fresh for each half of the rounds. */
    const startGateway = async (name: "A" | "B", half: number) => {
      const root = roots[name];
      buildIfStale(root);
      const dataDir = path.join(dir, `${name}-${half}`);
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
      return { name, child, request };
    };
    const results: Record<"A" | "B", LoadResult[]> = { A: [], B: [] };
    const highestRss: Record<"A" | "B", number> = { A: 0, B: 0 };
    // The gateway started second ran 2 to 6% faster than the first in runs of one build against
    // itself: the first half of the rounds starts A first, the second half (fresh processes and
    // stores) B first, so that neither build always has the same place.
    const halves = [
      { starts: ["A", "B"] as const, rounds: Math.ceil(rounds / 2) },
      { starts: ["B", "A"] as const, rounds: Math.floor(rounds / 2) },
    ];
    let round = 0;
    for (const [h, half] of halves.entries()) {
      if (half.rounds === 0) continue;
      const started = [];
      for (const name of half.starts) started.push(await startGateway(name, h));
      const byName = [...started].sort((x, y) => x.name.localeCompare(y.name));
      for (let i = 0; i < half.rounds; i++) {
        round++;
        // A then B on odd rounds, B then A on even ones: neither always follows the other.
        const order = round % 2 === 1 ? byName : [...byName].reverse();
        for (const t of order) {
          const r = await loadTarget(t.request, settings, [{ name: "server", pid: t.child.pid }]);
          results[t.name].push(r);
          const cpu = r.cpu?.[0]?.msPerRequest ?? Number.NaN;
          process.stdout.write(
            `round ${round} ${t.name}: ${(cpu * 1000).toFixed(0)} us/req, ${r.requestsPerSecond.toFixed(0)} req/s, p99 ${r.latencyMs.p99} ms, non2xx ${r.non2xx}, errors ${r.errors}\n`,
          );
        }
      }
      for (const t of started) {
        highestRss[t.name] = Math.max(highestRss[t.name], memoryOf(t.child.pid)?.peakRssMiB ?? 0);
        await children.stop(t.child);
      }
    }
    const cpuOf = (name: "A" | "B") => median(results[name].map((r) => (r.cpu?.[0]?.msPerRequest ?? 0) * 1000));
    const rateOf = (name: "A" | "B") => median(results[name].map((r) => r.requestsPerSecond));
    const p99Of = (name: "A" | "B") => median(results[name].map((r) => r.latencyMs.p99));
    process.stdout.write(
      `median A: ${cpuOf("A").toFixed(0)} us/req ${rateOf("A").toFixed(0)} req/s p99 ${p99Of("A")} ms; B: ${cpuOf("B").toFixed(0)} us/req ${rateOf("B").toFixed(0)} req/s p99 ${p99Of("B")} ms; B/A CPU ${(cpuOf("B") / cpuOf("A")).toFixed(3)}\n`,
    );
    // Each round loads A and B one after the other: the ratio within a round cancels the
    // machine's slower drifts, which move both alike, so its median and spread say more than
    // the ratio of the two medians.
    const cpuUs = (r: LoadResult) => (r.cpu?.[0]?.msPerRequest ?? Number.NaN) * 1000;
    const ratios = results.A.map((a, i) => cpuUs(results.B[i] as LoadResult) / cpuUs(a)).filter(Number.isFinite);
    if (ratios.length > 0) {
      process.stdout.write(
        `per round B/A CPU: median ${median(ratios).toFixed(3)}, from ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)}, B lower in ${ratios.filter((x) => x < 1).length} of ${ratios.length}\n`,
      );
    }
    process.stdout.write(`highest RSS A: ${highestRss.A.toFixed(0)} MiB; B: ${highestRss.B.toFixed(0)} MiB\n`);
  } finally {
    await children.stopAll();
    for (const drop of drops) await drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
