/**
 * Regenerates docs/benchmarks.md and docs/benchmarks.svg from one run's results. The "## Tasks"
 * section of the existing document is kept exactly as written. What profiling found, written by
 * hand, stays in bench/findings.md: the page links to it instead of copying it, so that it shows
 * the latest run, the targets and how to run them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { requestsPerSecondChart } from "./chart.js";
import { type LoadResult, median, medianRatio } from "./load.js";
import { methodAndUsage } from "./report-method.js";
import { type BenchResults, PHASES, type Phase, roundsOf, type TargetResult } from "./results.js";

const fixed = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || !Number.isFinite(n)
    ? "n/a"
    : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The text of a `## Heading` section (heading line included) up to the next `## ` heading, or null. */
export function extractSection(markdown: string, heading: string): string | null {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => l.trim() === `## ${heading}` || l.startsWith(`## ${heading} `));
  if (start < 0) return null;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^## /.test(lines[i] as string)) {
      end = i;
      break;
    }
  }
  return lines.slice(start, end).join("\n").trimEnd();
}

/** CPU time of the process that served the load, per answered request, in microseconds. */
function serverCpu(r: LoadResult, id: TargetResult["id"]): string {
  // Direct: the upstream itself ("simulator" in runs made before the minimal upstream existed).
  const names = id === "direct" ? ["upstream", "simulator"] : ["server"];
  const cpu = r.cpu?.find((c) => names.includes(c.name));
  return cpu ? fixed(cpu.msPerRequest * 1000) : "n/a";
}

function loadTable(results: BenchResults, phase: Phase): string[] {
  const find = (id: TargetResult["id"]) => results.targets.find((t) => t.id === id);
  const rps = (r: LoadResult) => r.requestsPerSecond;
  const p99 = (r: LoadResult) => r.latencyMs.p99;
  const ratio = (
    t: TargetResult,
    id: TargetResult["id"],
    pick: (r: LoadResult) => number,
    show: (v: number) => string,
  ) => {
    const v = medianRatio(roundsOf(t, phase), roundsOf(find(id), phase), pick);
    return v === null ? "n/a" : show(v);
  };
  const asPercent = (v: number) => `${fixed(v * 100)}%`;
  const asTimes = (v: number) => `${fixed(v, 1)}x`;
  const rows = [
    "| path | req/s | vs direct | vs bare relay | vs peer | p50 ms | p99 ms | p99 vs peer | server CPU µs/req | non-2xx / errors |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const t of results.targets) {
    const r = t[phase];
    if (!r) {
      rows.push(`| ${t.label} | not measured | | | | | | | | |`);
      continue;
    }
    rows.push(
      `| ${t.label} | ${fixed(r.requestsPerSecond)} | ${ratio(t, "direct", rps, asPercent)} | ${ratio(t, "bare-relay", rps, asPercent)} | ${ratio(t, "peer", rps, asTimes)} | ${fixed(r.latencyMs.p50)} | ${fixed(r.latencyMs.p99)} | ${ratio(t, "peer", p99, asPercent)} | ${serverCpu(r, t.id)} | ${r.non2xx} / ${r.errors} |`,
    );
  }
  return rows;
}

/**
 * The PostgreSQL gateway against the SQLite one, load by load, for the users of this run (one hot
 * user, or many): requests per second at least 50% of SQLite's, CPU per request within 1.3x.
 */
function postgresTable(results: BenchResults): string[] {
  const sqlite = results.targets.find((t) => t.id === "gateway-sqlite");
  const postgres = results.targets.find((t) => t.id === "gateway-postgres");
  if (!sqlite || !postgres) return [];
  const users = results.settings.users ?? 1;
  const who = users === 1 ? "one hot user" : `${users} users`;
  const server = (r: LoadResult) => r.cpu?.find((c) => c.name === "server")?.msPerRequest ?? Number.NaN;
  const titles = { generate: "generateContent", stream: "streamGenerateContent", chat: "chat completions" } as const;
  const rows: string[] = [];
  for (const phase of ["generate", "stream", "chat"] as const) {
    const pg = roundsOf(postgres, phase);
    const lite = roundsOf(sqlite, phase);
    if (!pg || !lite) continue;
    const rate = medianRatio(pg, lite, (r) => r.requestsPerSecond);
    const cpu = medianRatio(pg, lite, server);
    const verdict =
      rate === null || cpu === null || !Number.isFinite(cpu)
        ? "not measured"
        : rate >= 0.5 && cpu <= 1.3
          ? "met"
          : "missed";
    rows.push(
      `| ${titles[phase]}, ${who} | ${rate === null ? "n/a" : `${fixed(rate * 100)}%`} | ${cpu === null || !Number.isFinite(cpu) ? "n/a" : `${fixed(cpu, 2)}x`} | ${verdict} |`,
    );
  }
  if (rows.length === 0) return [];
  return [
    "### PostgreSQL against SQLite",
    "",
    `The two gateways of this run, ${users === 1 ? "one user behind one token" : `the load spread over ${users} users, each behind a token of its own`}. Goal: requests per second at least 50% of SQLite's and server CPU per request within 1.3x of SQLite's (medians of the per-round ratios).`,
    "",
    "| load | req/s vs SQLite | CPU µs/req vs SQLite | verdict |",
    "|---|---:|---:|---|",
    ...rows,
    "",
  ];
}

function firstEventTable(results: BenchResults): string[] {
  const bare = results.targets.find((t) => t.id === "bare-relay")?.firstEvent;
  const rows = [
    "| path | first event p50 ms | first event p99 ms | p50 vs bare relay | end of stream p50 ms | events per stream |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const t of results.targets) {
    const r = t.firstEvent;
    if (!r) {
      rows.push(`| ${t.label} | not measured | | | | |`);
      continue;
    }
    const delta = bare ? r.firstEventMs.p50 - bare.firstEventMs.p50 : Number.NaN;
    rows.push(
      `| ${t.label} | ${fixed(r.firstEventMs.p50, 2)} | ${fixed(r.firstEventMs.p99, 2)} | ${Number.isFinite(delta) ? `${delta >= 0 ? "+" : ""}${fixed(delta, 2)} ms` : "n/a"} | ${fixed(r.endOfStreamMs.p50, 1)} | ${r.eventsPerStream}${r.failures ? ` (${r.failures} failed)` : ""} |`,
    );
  }
  return rows;
}

function taskRows(results: BenchResults): string[] {
  const out: string[] = [];
  for (const run of results.tasks) {
    if (!run.ran && run.results.length === 0) {
      out.push(`- ${run.store}: not run (${run.note ?? "no reason given"}).`);
      continue;
    }
    for (const line of run.results) {
      const { bench, store, ...figures } = line;
      const text = Object.entries(figures)
        .map(([k, v]) => `${k} ${typeof v === "number" ? fixed(v, Number.isInteger(v) ? 0 : 2) : JSON.stringify(v)}`)
        .join(", ");
      out.push(`- ${String(store ?? run.store)}, ${String(bench)}: ${text}`);
    }
    if (!run.ran) out.push(`- ${run.store}: incomplete (${run.note ?? "no reason given"}).`);
    else if (run.durationSeconds !== undefined)
      out.push(`- ${run.store}: the task benchmark took ${fixed(run.durationSeconds, 1)} s.`);
  }
  return out;
}

/**
 * The machine's steal over the run's relay loads (every path, round and phase): the bullet that
 * says how much of the CPU the hypervisor took while the figures were measured; none for a run
 * saved before it was recorded.
 */
function stealLine(results: BenchResults): string[] {
  const steals = results.targets.flatMap((t) =>
    PHASES.flatMap((phase) => (roundsOf(t, phase) ?? []).map((r) => r.stealPercent)),
  );
  const known = steals.filter((v): v is number => v !== undefined && Number.isFinite(v));
  if (known.length === 0) return [];
  return [
    `- Machine steal (the share of the machine's CPU time its hypervisor gave to other work while a load was measured, from /proc/stat): median ${fixed(median(known), 1)}%, highest ${fixed(Math.max(...known), 1)}% over ${known.length} loads. CPU per request counts only the time a process ran, but a machine with much steal is also one whose caches and cores are shared: runs with little of it compare best.`,
  ];
}

function unavailable(results: BenchResults): string[] {
  const out: string[] = [];
  const describe = (t: TargetResult) => t.unavailableReason ?? "no reason recorded";
  for (const t of results.targets) {
    if (!t.available) out.push(`- ${t.label}: not measured: ${describe(t)}`);
    for (const e of t.errors ?? []) out.push(`- ${t.label}: ${e}`);
  }
  for (const n of results.images.notes) out.push(`- images, ${n}`);
  for (const n of results.notes) out.push(`- ${n}`);
  return out;
}

/** Builds the whole document from the results and the kept sections. */
export function renderReport(results: BenchResults, tasksSection: string | null): string {
  const m = results.machine;
  const s = results.settings;
  const file = `bench/results/${results.date}.json`;
  const upstream = s.upstream ?? "simulator";
  const upstreamName = upstream === "minimal" ? "minimal upstream" : "simulator";
  const images = [
    [`direct (${upstreamName}, Gemini image request)`, results.images.direct],
    ["gateway (SQLite), POST /v1/images/generations", results.images.gateway],
    ["gateway (PostgreSQL), POST /v1/images/generations", results.images.gatewayPostgres],
  ] as const;
  const peerLine = results.peer.works
    ? `${results.peer.package}@${results.peer.version} on Node ${results.peer.node}: runs.`
    : `${results.peer.package}${results.peer.version ? `@${results.peer.version}` : ""} on Node ${results.peer.node}: **not measured**: ${results.peer.note ?? "no reason recorded"}.`;
  const lines = [
    "# Benchmarks",
    "",
    `<!-- Regenerated by \`npm run bench\` from ${file}. Edit bench/report.ts instead; the "## Tasks" section is kept as written. -->`,
    "",
    "What a relay costs: the same request sent straight to the upstream, through a bare Fastify + undici",
    "pass-through (the practical limit of a Node relay), through this gateway doing its real work (token",
    "check, up-front charge and settlement in the ledger, request log, request logging) and through the",
    `open-source peer gateway ${results.peer.package}: Gemini generateContent, its SSE stream, and streamed`,
    "OpenAI chat completions. Every figure below comes from one run on one machine over loopback, so the",
    "ratios compare like with like; absolute numbers depend on the machine.",
    "",
    "## Latest run",
    "",
    `- Run ${results.date} (UTC), results in \`${file}\`.`,
    ...(s.quick
      ? ["- **A quick smoke run** (`--quick`): its figures show that every path answers, not how fast it is."]
      : []),
    upstream === "minimal"
      ? "- Upstream: the minimal upstream (`bench/minimal-upstream.ts`): fixed answers and fixed SSE streams, built once, request bodies never parsed; it costs far less than any relay, so these loads show the relays' own cost."
      : "- Upstream: the upstream simulator (`src/simulator/`): it parses every request and builds every answer, and on a 2-core machine its own CPU sets much of the pace; these loads show the whole system.",
    `- Machine: ${m.cpus} cpus (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}.`,
    `- Load: autocannon, ${s.connections} connections, ${s.durationSeconds} s per measurement after ${s.warmupSeconds} s of warm-up; requests per second count 2xx answers only.`,
    ...(s.users && s.users > 1
      ? [
          `- Users: ${s.users} users on each gateway, each with a token and ample quota; every connection sends their keys in turn, so the gateways' loads are spread evenly over them (the other paths take no key of their own).`,
        ]
      : []),
    `- ${s.rounds ?? 1} round${(s.rounds ?? 1) === 1 ? "" : "s"} of each load: in every round each path is loaded once, one after the other. A figure is the median over the rounds; a ratio is the median of the ratios of each round, so that it compares two paths under the same state of the machine.`,
    `- Server CPU: user + system CPU time of the process that answered (the ${upstreamName} for direct), per answered request, from /proc; it moves less than requests per second when the machine is shared.`,
    ...stealLine(results),
    `- Gemini model \`${s.model}\` on a \`gemini\` channel: three chunks of text per answer; prompt "${s.prompt}".`,
    ...(s.chatModel
      ? [
          `- Chat: \`POST /v1/chat/completions\` with \`stream: true\`, model \`${s.chatModel}\` on an \`openai-chat\` channel (the gateway), the same body passed through (the bare relay), the peer's own chat route ${results.peer.openAiChatRoute === "answers 200" ? "with its `openai` provider and a custom host" : "with its `google` provider (its `openai` provider failed, see below)"}; the same prompt, the answer in chunks ending in \`data: [DONE]\`.`,
        ]
      : []),
    `- Peer: ${peerLine}`,
    "",
    "![Requests per second by path](benchmarks.svg)",
    "",
    "### generateContent",
    "",
    ...loadTable(results, "generate"),
    "",
    "### streamGenerateContent (alt=sse)",
    "",
    ...loadTable(results, "stream"),
    "",
    ...(results.targets.some((t) => t.chat)
      ? ["### Chat completions (stream: true)", "", ...loadTable(results, "chat"), ""]
      : []),
    ...postgresTable(results),
    "### Time to first event",
    "",
    `${s.firstEventRequests} streams one after another on one connection, without other load. The ${upstreamName} sends the`,
    "first chunk at once and the second 200 ms later, so a path that buffered the stream would show a first",
    "event near the end of the stream. A path with fewer events per stream than direct lost events on the way.",
    "",
    ...firstEventTable(results),
    "",
    "### Memory (RSS of each process, MiB)",
    "",
    "Under load: the highest RSS sampled while the relay loads ran (generateContent, its stream, chat), which",
    "every relay serves; the image load, which only the gateways serve, is its own column. The peak is the",
    "whole run's, the image load included.",
    "",
    "| process | after start | highest under the relay loads | highest under the image load | peak (VmHWM) |",
    "|---|---:|---:|---:|---:|",
    ...results.memory.map(
      (p) =>
        `| ${p.name} | ${fixed(p.idleMiB)} | ${fixed(p.loadedMiB)} | ${p.imagesMiB == null ? "n/a" : fixed(p.imagesMiB)} | ${fixed(p.peakMiB)} |`,
    ),
    "",
    "### Images (`image-model`, 1K tier)",
    "",
    "| path | req/s | p50 ms | p99 ms | non-2xx / errors |",
    "|---|---:|---:|---:|---:|",
    ...images.map(([label, r]) =>
      r
        ? `| ${label} | ${fixed(r.requestsPerSecond)} | ${fixed(r.latencyMs.p50)} | ${fixed(r.latencyMs.p99)} | ${r.non2xx} / ${r.errors} |`
        : `| ${label} | not measured | | | |`,
    ),
    "",
    "The gateway's image path decodes the upstream's inline PNG, stores it in the blob store, charges and",
    "settles the ledger and answers with its own URL.",
    "",
    "### Task figures of this run",
    "",
    ...(taskRows(results).length ? taskRows(results) : ["- none"]),
    "",
    "### Targets",
    "",
    "| target | goal | this run | verdict |",
    "|---|---|---|---|",
    ...results.checks.map((c) => `| ${c.name} | ${c.goal} | ${c.measured} | ${c.verdict} |`),
    "",
  ];
  const methods = { generate: "generateContent", stream: "streamGenerateContent", chat: "chat completions" } as const;
  for (const phase of ["generate", "stream", "chat"] as const) {
    const profile = results.profile?.[phase];
    if (!profile) continue;
    const method = methods[phase];
    lines.push(
      `### Gateway CPU profile of this run: ${method}`,
      "",
      `Self time of the SQLite gateway's process during its own ${method} load (inspector profiler, ${profile.samples} samples, shares of busy time).`,
      "",
      "| area | self time | with what it calls |",
      "|---|---:|---:|",
      ...profile.byArea.slice(0, 12).map((a) => {
        const inclusive = profile.inclusiveByArea?.find((i) => i.area === a.area);
        return `| ${a.area} | ${fixed(a.selfPercent, 1)}% | ${inclusive ? `${fixed(inclusive.selfPercent, 1)}%` : ""} |`;
      }),
      ...(profile.inclusiveByArea ?? [])
        .filter((i) => !profile.byArea.slice(0, 12).some((a) => a.area === i.area))
        .slice(0, 8)
        .map((i) => `| ${i.area} | | ${fixed(i.selfPercent, 1)}% |`),
      "",
      "| function | where | self time |",
      "|---|---|---:|",
      ...profile.topFunctions
        .slice(0, 15)
        .map((f) => `| \`${f.functionName}\` | ${f.location || "(runtime)"} | ${fixed(f.selfPercent, 1)}% |`),
      "",
    );
  }
  const missing = unavailable(results);
  if (missing.length) lines.push("### Not measured or failed in this run", "", ...missing, "");
  lines.push(
    "## Findings",
    "",
    "What profiling and measurement found, round by round (what each change cost or saved, what was weighed",
    "and left out, where every target stood), is kept in [bench/findings.md](../bench/findings.md).",
    "",
  );
  if (tasksSection) lines.push(tasksSection, "");
  lines.push(...methodAndUsage(results));
  return lines.join("\n");
}

/** Writes docs/benchmarks.md (keeping its Tasks section) and docs/benchmarks.svg. */
export function writeReport(root: string, results: BenchResults): void {
  const docPath = path.join(root, "docs", "benchmarks.md");
  const existing = existsSync(docPath) ? readFileSync(docPath, "utf8") : "";
  const tasksSection = extractSection(existing, "Tasks");
  const caption = `Run ${results.date}, ${results.machine.cpus} cpus, Node ${results.machine.node}, ${results.settings.connections} connections, ${results.settings.durationSeconds} s each`;
  writeFileSync(path.join(root, "docs", "benchmarks.svg"), requestsPerSecondChart(results.targets, caption));
  writeFileSync(docPath, renderReport(results, tasksSection));
}

// `node --import tsx bench/report.ts bench/results/<date>.json` regenerates the page from a saved
// run (after editing bench/report.ts, for instance) without measuring again.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: node --import tsx bench/report.ts bench/results/<date>.json");
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  writeReport(root, JSON.parse(readFileSync(file, "utf8")) as BenchResults);
  process.stdout.write("wrote docs/benchmarks.md and docs/benchmarks.svg\n");
}
