/**
 * `npm run bench`: relay overhead side by side, in one bounded run on this machine (loopback only).
 * Direct to the simulator, through the bare relay, through the gateway (real token, billing and
 * logging; SQLite, and PostgreSQL with --pg) and through the peer gateway; generateContent and
 * streaming load, time to first event, RSS of each process, images through the gateway and the
 * task figures. Writes bench/results/<date>.json and regenerates docs/benchmarks.md.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checksFor } from "./checks.js";
import { profilerCommand } from "./cpu-profiler.js";
import { measureFirstEvent } from "./first-event.js";
import { createTemporaryDatabase, provisionGateway } from "./gateway-setup.js";
import { type LoadRequest, type LoadResult, loadTarget, medianOfRounds, type WatchedProcess } from "./load.js";
import { readOptions } from "./options.js";
import { installPeer, PEER_PACKAGE, peerChildSpec, peerRequest } from "./peer.js";
import { ChildProcesses, freePort, memoryOf, type RunningChild } from "./processes.js";
import { summarizeProfile } from "./profile-summary.js";
import { writeReport } from "./report.js";
import type { BenchResults, ProcessMemory, TargetId, TargetResult } from "./results.js";
import { runTaskBenchmark } from "./tasks-runner.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MODEL = "gemini-2.5-flash";
const IMAGE_MODEL = "image-model";
const SIMULATOR_KEY = "bench-simulator-key";
const PROMPT = "Write one line about a harbor at dawn.";
// `[slow]` makes the simulator wait 200 ms before each chunk after the first: a relay that
// buffered would show its first event near the end of the stream instead of at once.
const FIRST_EVENT_PROMPT = "[slow] [chunks=2] Write one line about a harbor at dawn.";

const log = (line: string) => process.stdout.write(`${line}\n`);
const fixed = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n) ? "n/a" : n.toFixed(digits);

function geminiRequest(base: string, key: string, stream: boolean, prompt: string): LoadRequest {
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return {
    url: `${base.replace(/\/$/, "")}/v1beta/models/${MODEL}:${method}`,
    headers: { "content-type": "application/json", "x-goog-api-key": key },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: prompt }] }],
      generationConfig: { maxOutputTokens: 256 },
    }),
  };
}

/** One request before the load: null when it answers as expected, else why not. */
async function preflight(request: LoadRequest, expect: "json" | "sse" | "image"): Promise<string | null> {
  try {
    const res = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const where = new URL(request.url).pathname;
    if (res.status !== 200) return `POST ${where} answered ${res.status}: ${text.slice(0, 160)}`;
    if (expect === "sse" && !/(^|\n)data:/.test(text)) return `POST ${where} answered 200 without any event`;
    if (expect === "json" && !/"(candidates|choices)"/.test(text))
      return `POST ${where} answered 200 without candidates`;
    if (expect === "image" && !/"url"/.test(text)) return `POST ${where} answered 200 without an image URL`;
    return null;
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
}

/** Highest RSS of each named process while `work` runs (sampled every 200 ms). */
const loadedMemory = new Map<string, number>();
async function sampled<T>(children: RunningChild[], work: () => Promise<T>): Promise<T> {
  const sample = () => {
    for (const child of children) {
      const m = memoryOf(child.pid);
      if (m) loadedMemory.set(child.name, Math.max(loadedMemory.get(child.name) ?? 0, m.rssMiB));
    }
  };
  const timer = setInterval(sample, 200);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    sample();
  }
}

function describeLoad(name: string, r: LoadResult): string {
  const bad = r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : "";
  const cpu = (r.cpu ?? [])
    .map((c) => `${c.name} ${fixed(c.msPerRequest * 1000)} us/req (${fixed(c.busyPercent)}%)`)
    .join(", ");
  return `  ${name.padEnd(22)} ${fixed(r.requestsPerSecond).padStart(7)} req/s  p50 ${fixed(r.latencyMs.p50)} ms  p99 ${fixed(r.latencyMs.p99)} ms${bad}${cpu ? `  cpu: ${cpu}` : ""}`;
}

/** The processes whose CPU a load reads: the target's server, the simulator and the load generator itself. */
function watched(sim: RunningChild, server: RunningChild | null): WatchedProcess[] {
  return [
    ...(server ? [{ name: "server", pid: server.pid }] : []),
    { name: "simulator", pid: sim.pid },
    { name: "load generator", pid: process.pid },
  ];
}

async function main() {
  const options = readOptions(process.argv.slice(2), process.env);
  const startedAt = new Date();
  const date = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/:/g, "-");
  const runDir = mkdtempSync(path.join(os.tmpdir(), "mg-relay-bench-"));
  const children = new ChildProcesses();
  const cleanups: (() => Promise<void>)[] = [];
  const notes: string[] = [];
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
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      rounds: options.rounds,
      firstEventRequests: options.firstEventRequests,
      model: MODEL,
      prompt: PROMPT,
      streamPrompt: PROMPT,
      firstEventPrompt: FIRST_EVENT_PROMPT,
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
    `  ${options.connections} connections, ${options.rounds} rounds of ${options.durationSeconds} s per load (+${options.warmupSeconds} s warm-up), ${options.firstEventRequests} streams for first event`,
  );
  const profileFile = (phase: string) => path.join(runDir, `gateway-${phase}.cpuprofile`);
  const gatewayChildren: { id: TargetId; child: RunningChild }[] = [];
  try {
    const tsx = ["--import", "tsx"];
    const sim = await children.start({
      name: "simulator",
      args: [...tsx, path.join(ROOT, "bench/simulator-entry.ts")],
      cwd: ROOT,
      env: { ...process.env },
      logFile: path.join(runDir, "simulator.log"),
      ready: { kind: "ipc" },
    });
    const relay = await children.start({
      name: "bare relay",
      args: [...tsx, path.join(ROOT, "bench/bare-relay.ts")],
      cwd: ROOT,
      env: { ...process.env, BENCH_UPSTREAM: sim.url },
      logFile: path.join(runDir, "bare-relay.log"),
      ready: { kind: "ipc" },
    });
    log(`  simulator ${sim.url} (pid ${sim.pid}), bare relay ${relay.url} (pid ${relay.pid})`);

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
    const gatewayTokens = new Map<TargetId, { url: string; token: string }>();
    for (const store of stores) {
      const dataDir = path.join(runDir, store.id);
      mkdirSync(dataDir, { recursive: true });
      const child = await children.start({
        name: store.label,
        args: [...tsx, path.join(ROOT, "bench/gateway-entry.ts")],
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
      const { token } = await provisionGateway(child.url, adminKey, { url: sim.url, key: SIMULATOR_KEY }, [
        MODEL,
        IMAGE_MODEL,
      ]);
      gatewayTokens.set(store.id, { url: child.url, token });
      gatewayChildren.push({ id: store.id, child });
      log(`  ${store.label} ${child.url} (pid ${child.pid})`);
    }

    let peer: RunningChild | null = null;
    if (options.skip.has("peer")) {
      results.peer.note = "left out (--skip peer)";
    } else {
      try {
        const dir = options.peerDir ?? path.join(runDir, "peer");
        mkdirSync(dir, { recursive: true });
        log(`  installing ${PEER_PACKAGE}@${options.peerVersion} from the npm registry ...`);
        const install = await installPeer(dir, options.peerVersion);
        results.peer.version = install.version;
        peer = await children.start(peerChildSpec(install, await freePort(), path.join(runDir, "peer.log")));
        log(`  peer ${PEER_PACKAGE}@${install.version} ${peer.url} (pid ${peer.pid})`);
        // Its native pass-through route, for the record: the chat route below is the one loaded.
        const native = await preflight(
          {
            url: `${peer.url.replace(/\/$/, "")}/v1/models/${MODEL}:generateContent`,
            headers: {
              "content-type": "application/json",
              "x-portkey-provider": "google",
              "x-portkey-custom-host": `${sim.url}/v1beta`,
              "x-goog-api-key": SIMULATOR_KEY,
              authorization: `Bearer ${SIMULATOR_KEY}`,
            },
            body: geminiRequest(sim.url, SIMULATOR_KEY, false, PROMPT).body,
          },
          "json",
        );
        results.peer.nativeRoute = native ?? "answers 200";
      } catch (err) {
        results.peer.note = `could not be run on node ${process.version}: ${(err as Error).message.split("\n")[0]}`;
        log(`  peer: ${results.peer.note}`);
      }
    }

    // The targets, each with the request it is loaded with.
    type Plan = {
      result: TargetResult;
      child: RunningChild | null;
      request: (stream: boolean, prompt: string) => LoadRequest;
    };
    const plans: Plan[] = [
      {
        result: { id: "direct", label: "direct", description: "straight to the simulator", available: true },
        child: null,
        request: (stream, prompt) => geminiRequest(sim.url, SIMULATOR_KEY, stream, prompt),
      },
      {
        result: {
          id: "bare-relay",
          label: "bare relay",
          description: "Fastify + undici pass-through (bench/bare-relay.ts)",
          available: true,
        },
        child: relay,
        request: (stream, prompt) => geminiRequest(relay.url, SIMULATOR_KEY, stream, prompt),
      },
      ...gatewayChildren.map(({ id, child }) => {
        const { url, token } = gatewayTokens.get(id)!;
        return {
          result: {
            id,
            label: child.name,
            description: "token auth, up-front charge and settlement in the ledger, request log, pino logs",
            available: true,
          },
          child,
          request: (stream: boolean, prompt: string) => geminiRequest(url, token, stream, prompt),
        };
      }),
      {
        result: {
          id: "peer",
          label: "peer",
          description: `${PEER_PACKAGE}, google provider, custom host (OpenAI chat completions in, Gemini out)`,
          available: peer !== null,
          ...(peer ? {} : { unavailableReason: results.peer.note }),
        },
        child: peer,
        request: (stream, prompt) => peerRequest(peer?.url ?? "", sim.url, SIMULATOR_KEY, MODEL, prompt, stream),
      },
    ];
    results.targets = plans.map((p) => p.result);

    for (const plan of plans.filter((p) => p.result.available)) {
      const problem =
        (await preflight(plan.request(false, PROMPT), "json")) ??
        (options.skip.has("stream") ? null : await preflight(plan.request(true, PROMPT), "sse"));
      if (problem) {
        plan.result.available = false;
        plan.result.unavailableReason = problem;
        log(`  ${plan.result.label}: not measured: ${problem}`);
      }
    }
    if (peer) {
      const peerPlan = plans.find((p) => p.result.id === "peer")!;
      results.peer.works = peerPlan.result.available;
      if (!peerPlan.result.available) results.peer.note = peerPlan.result.unavailableReason;
    }

    const processes = [sim, relay, ...gatewayChildren.map((g) => g.child), ...(peer ? [peer] : [])];
    const idle = new Map(processes.map((c) => [c.name, memoryOf(c.pid)?.rssMiB ?? null]));
    const measured = plans.filter((p) => p.result.available);
    const settings = {
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
    };
    const attempt = async (plan: Plan, what: string, work: () => Promise<void>) => {
      try {
        await sampled([sim, ...(plan.child ? [plan.child] : [])], work);
      } catch (err) {
        const message = `${what}: ${(err as Error).message}`;
        plan.result.errors = [...(plan.result.errors ?? []), message];
        log(`  ${plan.result.label}: ${message}`);
      }
    };

    // Each phase runs in rounds: every target once per round, in turn, so that a slow or fast
    // spell of a shared machine falls on all of them; figures are medians over the rounds.
    const phases = [
      { phase: "generate" as const, stream: false, title: "generateContent" },
      ...(options.skip.has("stream")
        ? []
        : [{ phase: "stream" as const, stream: true, title: "streamGenerateContent (alt=sse)" }]),
    ];
    for (const { phase, stream, title } of phases) {
      const rounds = new Map<Plan, LoadResult[]>();
      for (let round = 1; round <= options.rounds; round++) {
        log(`${title}, round ${round} of ${options.rounds}:`);
        for (const plan of measured) {
          // --profile: a CPU profile of the SQLite gateway during its own load of the last round.
          const profiled =
            options.profile && plan.result.id === "gateway-sqlite" && round === options.rounds ? plan.child : null;
          if (profiled) await profilerCommand(profiled.process, "profile-start");
          await attempt(plan, `${title} load`, async () => {
            const r = {
              ...(await loadTarget(plan.request(stream, PROMPT), settings, watched(sim, plan.child))),
              round,
            };
            rounds.set(plan, [...(rounds.get(plan) ?? []), r]);
            log(describeLoad(plan.result.label, r));
          });
          if (profiled) await profilerCommand(profiled.process, "profile-stop", profileFile(phase));
        }
      }
      for (const [plan, list] of rounds) {
        plan.result[phase] = medianOfRounds(list);
        if (phase === "generate") plan.result.generateRounds = list;
        else plan.result.streamRounds = list;
      }
    }
    if (!options.skip.has("stream")) {
      log(`time to first event (${options.firstEventRequests} sequential streams, 2 chunks 200 ms apart):`);
      for (const plan of measured) {
        await attempt(plan, "first event", async () => {
          const r = await measureFirstEvent(plan.request(true, FIRST_EVENT_PROMPT), options.firstEventRequests);
          plan.result.firstEvent = r;
          log(
            `  ${plan.result.label.padEnd(22)} first event p50 ${fixed(r.firstEventMs.p50, 2)} ms  p99 ${fixed(r.firstEventMs.p99, 2)} ms  end of stream p50 ${fixed(r.endOfStreamMs.p50, 1)} ms  ${r.eventsPerStream} events${r.failures ? `, ${r.failures} failed` : ""}`,
          );
        });
      }
    }

    if (!options.skip.has("images")) {
      log(`images (${IMAGE_MODEL}, 1K tier):`);
      const imageBody = JSON.stringify({ model: IMAGE_MODEL, prompt: "a lighthouse at dawn, watercolour" });
      const direct: LoadRequest = {
        url: `${sim.url}/v1beta/models/${IMAGE_MODEL}:generateContent`,
        headers: { "content-type": "application/json", "x-goog-api-key": SIMULATOR_KEY },
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: "a lighthouse at dawn, watercolour" }] }],
          generationConfig: { responseModalities: ["TEXT", "IMAGE"] },
        }),
      };
      const directProblem = await preflight(direct, "json");
      if (directProblem) results.images.notes.push(`direct: ${directProblem}`);
      else {
        results.images.direct = await sampled([sim], () => loadTarget(direct, settings, watched(sim, null)));
        log(describeLoad("direct (simulator)", results.images.direct));
      }
      for (const { id, child } of gatewayChildren) {
        const { url, token } = gatewayTokens.get(id)!;
        const request: LoadRequest = {
          url: `${url}/v1/images/generations`,
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: imageBody,
        };
        const problem = await preflight(request, "image");
        if (problem) {
          results.images.notes.push(`${child.name}: not measured: ${problem}`);
          log(`  ${child.name}: not measured: ${problem}`);
          continue;
        }
        const r = await sampled([sim, child], () => loadTarget(request, settings, watched(sim, child)));
        if (id === "gateway-sqlite") results.images.gateway = r;
        else results.images.gatewayPostgres = r;
        log(describeLoad(child.name, r));
      }
    }

    results.memory = processes.map(
      (c): ProcessMemory => ({
        name: c.name,
        idleMiB: idle.get(c.name) ?? null,
        loadedMiB: loadedMemory.get(c.name) ?? null,
        peakMiB: memoryOf(c.pid)?.peakRssMiB ?? null,
      }),
    );
    log("memory (RSS MiB: idle / under load / peak):");
    for (const m of results.memory)
      log(
        `  ${m.name.padEnd(22)} ${fixed(m.idleMiB ?? undefined)} / ${fixed(m.loadedMiB ?? undefined)} / ${fixed(m.peakMiB ?? undefined)}`,
      );

    // The servers are stopped before the task figures so that those get the whole machine.
    await children.stopAll();
    if (options.profile) {
      results.profile = {};
      for (const phase of ["generate", "stream"] as const) {
        if (!existsSync(profileFile(phase))) continue;
        const summary = summarizeProfile(profileFile(phase));
        results.profile[phase] = summary;
        log(`gateway CPU profile (${phase}), self time by area:`);
        for (const a of summary.byArea.slice(0, 8)) log(`  ${a.area.padEnd(40)} ${a.selfPercent}%`);
      }
      if (!results.profile.generate) notes.push("--profile was given but the gateway wrote no CPU profile");
    }

    if (options.skip.has("tasks")) {
      results.tasks.push({ store: "sqlite", ran: false, note: "left out (--skip tasks)", results: [] });
    } else {
      log("tasks (bench/tasks-bench.ts):");
      const stores = options.postgres ? [null, options.postgresUrl] : [null];
      for (const pgUrl of stores) {
        const figures = await runTaskBenchmark(ROOT, options.tasksTimeoutSeconds, pgUrl, options.tasksFull, log);
        results.tasks.push(figures);
        if (!figures.ran) log(`  tasks (${figures.store}): ${figures.note}`);
      }
    }

    const bare = results.targets.find((t) => t.id === "bare-relay");
    const peerTarget = results.targets.find((t) => t.id === "peer");
    for (const gateway of results.targets.filter((t) => t.id.startsWith("gateway-"))) {
      results.checks.push(...checksFor(gateway, bare, peerTarget));
    }
    log("targets:");
    for (const c of results.checks) log(`  [${c.verdict}] ${c.name}: ${c.measured} (goal ${c.goal})`);
  } finally {
    await children.stopAll();
    for (const cleanup of cleanups) {
      await cleanup().catch((err) => notes.push(`clean-up failed: ${(err as Error).message}`));
    }
    // BENCH_KEEP_RUN_DIR=1 keeps the logs of every process for a look after the run.
    if (process.env.BENCH_KEEP_RUN_DIR === "1") log(`  logs kept in ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  }

  results.finishedAt = new Date().toISOString();
  if (!options.write) {
    log("--no-write: nothing written");
    return;
  }
  const resultsDir = path.join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${date}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  writeReport(ROOT, results);
  log(`wrote ${path.relative(ROOT, file)}, docs/benchmarks.md and docs/benchmarks.svg`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
