/**
 * `npm run bench`: relay overhead side by side, in one bounded run on this machine (loopback only).
 * Direct to the upstream, through the bare relay, through the gateway (real token, billing and
 * logging; SQLite, and PostgreSQL with --pg) and through the peer gateway; generateContent,
 * streaming and streamed chat completions load, time to first event, RSS of each process, images
 * through the gateway and the task figures. The upstream is the minimal one (fixed answers: the
 * relay's own cost shows) or the simulator (the whole system). Writes bench/results/<date>.json and
 * regenerates docs/benchmarks.md.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { checksFor, memoryCheck, relayCostChecks } from "./checks.js";
import { profilerCommand } from "./cpu-profiler.js";
import { measureFirstEvent } from "./first-event.js";
import { createTemporaryDatabase, provisionGateway } from "./gateway-setup.js";
import { measureImages } from "./image-load.js";
import { type LoadRequest, type LoadResult, loadTarget, medianOfRounds, type WatchedProcess } from "./load.js";
import { MemorySampler } from "./memory-sampler.js";
import { type BenchOptions, readOptions } from "./options.js";
import { PEER_PACKAGE } from "./peer.js";
import { startPeer } from "./peer-start.js";
import { ChildProcesses, memoryOf, type RunningChild } from "./processes.js";
import { summarizeProfile } from "./profile-summary.js";
import { writeReport } from "./report.js";
import type { BenchResults, Phase, ProcessMemory, TargetId, TargetResult } from "./results.js";
import {
  CHAT_MODEL,
  chatRequest,
  type Expectation,
  FIRST_EVENT_PROMPT,
  geminiRequest,
  IMAGE_MODEL,
  MODEL,
  PACED_MODEL,
  PROMPT,
  preflight,
  UPSTREAM_KEY,
} from "./scenarios.js";
import { runTaskBenchmark } from "./tasks-runner.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TSX = ["--import", "tsx"];

/** Compiles src/ into dist/ when the sources are newer: the gateway runs its compiled JavaScript. */
function buildGateway(): void {
  const built = spawnSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (built.status !== 0) throw new Error(`the gateway's build failed (exit ${built.status ?? built.signal})`);
}

const fixed = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n) ? "n/a" : n.toFixed(digits);

function describeLoad(name: string, r: LoadResult): string {
  const bad = r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : "";
  const cpu = (r.cpu ?? [])
    .map((c) => `${c.name} ${fixed(c.msPerRequest * 1000)} us/req (${fixed(c.busyPercent)}%)`)
    .join(", ");
  const steal = r.stealPercent === undefined ? "" : `, machine steal ${fixed(r.stealPercent)}%`;
  return `  ${name.padEnd(22)} ${fixed(r.requestsPerSecond).padStart(7)} req/s  p50 ${fixed(r.latencyMs.p50)} ms  p99 ${fixed(r.latencyMs.p99)} ms${bad}${cpu ? `  cpu: ${cpu}` : ""}${steal}`;
}

/** The loads of each phase, with what a good answer to its preflight request looks like. */
const PHASE_LOADS: { phase: Phase; title: string; expect: Expectation }[] = [
  { phase: "generate", title: "generateContent", expect: "json" },
  { phase: "stream", title: "streamGenerateContent (alt=sse)", expect: "sse" },
  { phase: "chat", title: "chat completions (stream: true)", expect: "chat-sse" },
];

/** A target and the request of each of its loads. */
interface Plan {
  result: TargetResult;
  child: RunningChild | null;
  request: (phase: Phase) => LoadRequest;
  firstEvent: () => LoadRequest;
  /** What a good answer to a load's first request looks like, where it differs from PHASE_LOADS. */
  expect?: Partial<Record<Phase, Expectation>>;
}

/** Runs the benchmark with `options`; every child process is stopped before it returns or throws. */
export async function runBench(options: BenchOptions, log: (line: string) => void): Promise<BenchResults> {
  const startedAt = new Date();
  const date = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/:/g, "-");
  const runDir = mkdtempSync(path.join(os.tmpdir(), "mg-relay-bench-"));
  const children = new ChildProcesses();
  const memory = new MemorySampler();
  const imageMemory = new MemorySampler();
  const cleanups: (() => Promise<void>)[] = [];
  const notes: string[] = [];
  const skip = options.skip;
  const results: BenchResults = {
    date,
    startedAt: startedAt.toISOString(),
    finishedAt: "",
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
    },
    settings: {
      upstream: options.upstream,
      quick: options.quick,
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      rounds: options.rounds,
      firstEventRequests: options.firstEventRequests,
      model: MODEL,
      prompt: PROMPT,
      streamPrompt: PROMPT,
      firstEventPrompt: FIRST_EVENT_PROMPT,
      chatModel: CHAT_MODEL,
      ...(options.users > 1 ? { users: options.users } : {}),
    },
    peer: { package: PEER_PACKAGE, version: null, node: process.version, works: false },
    targets: [],
    images: { notes: [] },
    memory: [],
    tasks: [],
    checks: [],
    notes,
  };
  const stopping = () => {
    log("interrupted: stopping every child process");
    void children.stopAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", stopping);
  process.once("SIGTERM", stopping);

  log(`media-gateway bench ${date}: ${results.machine.cpus} cpus, node ${process.version}`);
  log(
    `  ${options.upstream} upstream, ${options.connections} connections, ${options.rounds} rounds of ${options.durationSeconds} s per load (+${options.warmupSeconds} s warm-up), ${options.firstEventRequests} streams for first event`,
  );
  if (options.users > 1)
    log(`  ${options.users} users per gateway, each with its token: the gateways' loads spread over them`);
  const profileFile = (phase: string) => path.join(runDir, `gateway-${phase}.cpuprofile`);
  const gateways: { id: TargetId; child: RunningChild; url: string; token: string; tokens: string[] }[] = [];
  try {
    const upstream = await children.start({
      name: options.upstream === "minimal" ? "minimal upstream" : "simulator",
      args: [
        ...TSX,
        path.join(ROOT, options.upstream === "minimal" ? "bench/minimal-upstream.ts" : "bench/simulator-entry.ts"),
      ],
      cwd: ROOT,
      env: { ...process.env },
      logFile: path.join(runDir, "upstream.log"),
      ready: { kind: "ipc" },
    });
    const relay = await children.start({
      name: "bare relay",
      args: [...TSX, path.join(ROOT, "bench/bare-relay.ts")],
      cwd: ROOT,
      env: { ...process.env, BENCH_UPSTREAM: upstream.url },
      logFile: path.join(runDir, "bare-relay.log"),
      ready: { kind: "ipc" },
    });
    log(`  ${upstream.name} ${upstream.url} (pid ${upstream.pid}), bare relay ${relay.url} (pid ${relay.pid})`);
    /** The processes whose CPU a load reads: the target's server, the upstream and the load generator itself. */
    const watched = (server: RunningChild | null): WatchedProcess[] => [
      ...(server ? [{ name: "server", pid: server.pid }] : []),
      { name: "upstream", pid: upstream.pid },
      { name: "load generator", pid: process.pid },
    ];

    const adminKey = randomBytes(24).toString("hex");
    const stores: { id: TargetId; label: string; databaseUrl: string }[] = [
      { id: "gateway-sqlite", label: "gateway (SQLite)", databaseUrl: `sqlite:${path.join(runDir, "gateway.sqlite")}` },
    ];
    if (options.postgres) {
      try {
        const db = await createTemporaryDatabase(options.postgresUrl);
        cleanups.push(db.drop);
        stores.push({ id: "gateway-postgres", label: "gateway (PostgreSQL)", databaseUrl: db.url });
      } catch (err) {
        notes.push(`PostgreSQL was asked for but is not reachable: ${(err as Error).message}`);
      }
    }
    buildGateway();
    for (const store of stores) {
      const dataDir = path.join(runDir, store.id);
      mkdirSync(dataDir, { recursive: true });
      const child = await children.start({
        name: store.label,
        // The compiled JavaScript, as `npm start` runs it (built above when the sources are newer).
        args: [path.join(ROOT, "bench/gateway-entry.mjs")],
        cwd: ROOT,
        env: {
          ...process.env,
          BENCH_DATABASE_URL: store.databaseUrl,
          BENCH_DATA_DIR: dataDir,
          BENCH_ADMIN_KEY: adminKey,
        },
        logFile: path.join(runDir, `${store.id}.log`),
        ready: { kind: "ipc" },
      });
      const { token, tokens } = await provisionGateway(
        child.url,
        adminKey,
        { url: upstream.url, key: UPSTREAM_KEY },
        { gemini: [MODEL, IMAGE_MODEL, PACED_MODEL], chat: [CHAT_MODEL], priced: [PACED_MODEL, CHAT_MODEL] },
        options.users,
      );
      gateways.push({ id: store.id, child, url: child.url, token, tokens });
      log(`  ${store.label} ${child.url} (pid ${child.pid})`);
    }

    const peerTarget = await startPeer({ children, options, runDir, upstreamUrl: upstream.url, log }, results.peer);
    const peer = peerTarget?.child ?? null;

    // The targets, each with the request of each load: Gemini paths as Gemini clients call them,
    // chat as OpenAI clients do (the gateway's over an `openai-chat` channel).
    // With several keys (a gateway's users), each load is spread over them.
    const relayed = (base: string, key: string, keys: string[] = [key]) => {
      const build = (phase: Phase, k: string) =>
        phase === "chat" ? chatRequest(base, k) : geminiRequest(base, k, phase === "stream");
      return {
        request: (phase: Phase): LoadRequest =>
          keys.length > 1
            ? { ...build(phase, key), headerSets: keys.map((k) => build(phase, k).headers) }
            : build(phase, key),
        firstEvent: () => geminiRequest(base, key, true, FIRST_EVENT_PROMPT, PACED_MODEL),
      };
    };
    const plans: Plan[] = [
      {
        result: { id: "direct", label: "direct", description: `straight to the ${upstream.name}`, available: true },
        child: null,
        ...relayed(upstream.url, UPSTREAM_KEY),
      },
      {
        result: {
          id: "bare-relay",
          label: "bare relay",
          description: "Fastify + undici pass-through (bench/bare-relay.ts)",
          available: true,
        },
        child: relay,
        ...relayed(relay.url, UPSTREAM_KEY),
      },
      ...gateways.map(({ id, child, url, token, tokens }) => ({
        result: {
          id,
          label: child.name,
          description: "token auth, up-front charge and settlement in the ledger, request log, pino logs",
          available: true,
        },
        child,
        ...relayed(url, token, tokens),
      })),
      {
        result: {
          id: "peer",
          label: "peer",
          description: `${PEER_PACKAGE}, custom host: google provider for the Gemini loads (OpenAI chat completions in, Gemini out), openai provider for chat when it streams`,
          available: peerTarget !== null,
          ...(peerTarget ? {} : { unavailableReason: results.peer.note }),
        },
        child: peer,
        request: (phase: Phase) => peerTarget!.request(phase),
        firstEvent: () => peerTarget!.firstEvent(),
        expect: peerTarget?.expect ?? {},
      },
    ];
    results.targets = plans.map((p) => p.result);
    const phases = PHASE_LOADS.filter(({ phase }) => phase === "generate" || !skip.has(phase));

    for (const plan of plans.filter((p) => p.result.available)) {
      for (const { phase, expect } of phases) {
        const problem = await preflight(plan.request(phase), plan.expect?.[phase] ?? expect);
        if (!problem) continue;
        plan.result.available = false;
        plan.result.unavailableReason = problem;
        log(`  ${plan.result.label}: not measured: ${problem}`);
        break;
      }
    }
    if (peer) {
      const peerPlan = plans.find((p) => p.result.id === "peer")!;
      results.peer.works = peerPlan.result.available;
      if (!peerPlan.result.available) results.peer.note = peerPlan.result.unavailableReason;
    }

    const processes = [upstream, relay, ...gateways.map((g) => g.child), ...(peer ? [peer] : [])];
    const idle = new Map(processes.map((c) => [c.name, memoryOf(c.pid)?.rssMiB ?? null]));
    const measured = plans.filter((p) => p.result.available);
    const settings = {
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
    };
    const attempt = async (plan: Plan, what: string, work: () => Promise<void>) => {
      try {
        await memory.during([upstream, ...(plan.child ? [plan.child] : [])], work);
      } catch (err) {
        const message = `${what}: ${(err as Error).message}`;
        plan.result.errors = [...(plan.result.errors ?? []), message];
        log(`  ${plan.result.label}: ${message}`);
      }
    };

    // Each phase runs in rounds: every target once per round, in turn, so that a slow or fast
    // spell of a shared machine falls on all of them; figures are medians over the rounds.
    for (const { phase, title } of phases) {
      const rounds = new Map<Plan, LoadResult[]>();
      for (let round = 1; round <= options.rounds; round++) {
        log(`${title}, round ${round} of ${options.rounds}:`);
        for (const plan of measured) {
          // --profile: a CPU profile of the SQLite gateway during its own load of the last round.
          const profiled =
            options.profile && plan.result.id === "gateway-sqlite" && round === options.rounds ? plan.child : null;
          if (profiled) await profilerCommand(profiled.process, "profile-start");
          await attempt(plan, `${title} load`, async () => {
            const r = { ...(await loadTarget(plan.request(phase), settings, watched(plan.child))), round };
            rounds.set(plan, [...(rounds.get(plan) ?? []), r]);
            log(describeLoad(plan.result.label, r));
          });
          if (profiled) await profilerCommand(profiled.process, "profile-stop", profileFile(phase));
        }
      }
      for (const [plan, list] of rounds) {
        plan.result[phase] = medianOfRounds(list);
        plan.result[`${phase}Rounds` as const] = list;
      }
    }
    if (!skip.has("stream")) {
      log(`time to first event (${options.firstEventRequests} sequential streams, 2 chunks 200 ms apart):`);
      for (const plan of measured) {
        await attempt(plan, "first event", async () => {
          const r = await measureFirstEvent(plan.firstEvent(), options.firstEventRequests);
          plan.result.firstEvent = r;
          log(
            `  ${plan.result.label.padEnd(22)} first event p50 ${fixed(r.firstEventMs.p50, 2)} ms  p99 ${fixed(r.firstEventMs.p99, 2)} ms  end of stream p50 ${fixed(r.endOfStreamMs.p50, 1)} ms  ${r.eventsPerStream} events${r.failures ? `, ${r.failures} failed` : ""}`,
          );
        });
      }
    }

    if (!skip.has("images")) {
      const profiled = options.profile ? gateways.find((g) => g.id === "gateway-sqlite")?.child : undefined;
      if (profiled) await profilerCommand(profiled.process, "profile-start");
      await measureImages(
        { upstream, gateways, settings, memory: imageMemory, watched, describe: describeLoad, log },
        results.images,
      );
      if (profiled) await profilerCommand(profiled.process, "profile-stop", profileFile("images"));
    }

    results.memory = processes.map(
      (c): ProcessMemory => ({
        name: c.name,
        idleMiB: idle.get(c.name) ?? null,
        loadedMiB: memory.highestOf(c.name),
        imagesMiB: imageMemory.highestOf(c.name),
        peakMiB: memoryOf(c.pid)?.peakRssMiB ?? null,
      }),
    );
    log("memory (RSS MiB: idle / under the relay loads / under the image load / peak):");
    for (const m of results.memory)
      log(
        `  ${m.name.padEnd(22)} ${fixed(m.idleMiB ?? undefined)} / ${fixed(m.loadedMiB ?? undefined)} / ${m.imagesMiB == null ? "-" : fixed(m.imagesMiB)} / ${fixed(m.peakMiB ?? undefined)}`,
      );

    // The servers are stopped before the task figures so that those get the whole machine.
    await children.stopAll();
    if (options.profile) {
      results.profile = {};
      for (const phase of ["generate", "stream", "chat", "images"] as const) {
        if (!existsSync(profileFile(phase))) continue;
        const summary = summarizeProfile(profileFile(phase));
        results.profile[phase] = summary;
        log(`gateway CPU profile (${phase}), self time by area:`);
        for (const a of summary.byArea.slice(0, 8)) log(`  ${a.area.padEnd(40)} ${a.selfPercent}%`);
      }
      if (!results.profile.generate) notes.push("--profile was given but the gateway wrote no CPU profile");
    }

    if (skip.has("tasks")) {
      results.tasks.push({ store: "sqlite", ran: false, note: "left out (--skip tasks)", results: [] });
    } else {
      log("tasks (bench/tasks-bench.ts):");
      const taskStores = options.postgres ? [null, options.postgresUrl] : [null];
      for (const pgUrl of taskStores) {
        const figures = await runTaskBenchmark(ROOT, options.tasksTimeoutSeconds, pgUrl, options.tasksFull, log);
        results.tasks.push(figures);
        if (!figures.ran) log(`  tasks (${figures.store}): ${figures.note}`);
      }
    }

    const bare = results.targets.find((t) => t.id === "bare-relay");
    const peerResult = results.targets.find((t) => t.id === "peer");
    for (const gateway of results.targets.filter((t) => t.id.startsWith("gateway-"))) {
      results.checks.push(...checksFor(gateway, bare, peerResult));
      // The relay-cost targets are judged on the minimal upstream only: on the simulator the
      // upstream's own CPU sets the pace.
      if (options.upstream === "minimal") {
        results.checks.push(...relayCostChecks(gateway, bare), memoryCheck(gateway.label, results.memory));
      }
    }
    log("targets:");
    for (const c of results.checks) log(`  [${c.verdict}] ${c.name}: ${c.measured} (goal ${c.goal})`);
  } finally {
    process.off("SIGINT", stopping);
    process.off("SIGTERM", stopping);
    await children.stopAll();
    for (const cleanup of cleanups) {
      await cleanup().catch((err) => notes.push(`clean-up failed: ${(err as Error).message}`));
    }
    // BENCH_KEEP_RUN_DIR=1 keeps the logs of every process for a look after the run.
    if (process.env.BENCH_KEEP_RUN_DIR === "1") log(`  logs kept in ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  }
  results.finishedAt = new Date().toISOString();
  return results;
}

async function main() {
  const options = readOptions(process.argv.slice(2), process.env);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const results = await runBench(options, log);
  if (!options.write) {
    log("--no-write: nothing written");
    return;
  }
  const resultsDir = path.join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${results.date}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  writeReport(ROOT, results);
  log(`wrote ${path.relative(ROOT, file)}, docs/benchmarks.md and docs/benchmarks.svg`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
