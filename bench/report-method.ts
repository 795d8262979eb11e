/** The "How it is measured" and "Running it" sections of docs/benchmarks.md. */
import { USAGE } from "./options.js";
import type { BenchResults } from "./results.js";

function nativeRoute(results: BenchResults): string {
  const answer = results.peer.nativeRoute;
  if (!answer) return "was not tried";
  return answer === "answers 200" ? "answered 200" : `failed: ${answer.replace(/\|/g, "/")}`;
}

function openAiChatRoute(results: BenchResults): string {
  const answer = results.peer.openAiChatRoute;
  if (!answer) return "was not tried";
  return answer === "answers 200"
    ? "answered 200 and was loaded"
    : `failed (${answer.replace(/\|/g, "/")}), so the chat load went through the google provider`;
}

/** The closing sections of the page: how each figure is measured (with what this run's peer routes answered) and the options. */
export function methodAndUsage(results: BenchResults): string[] {
  return [
    "## How it is measured",
    "",
    "- Every server is a process of its own, started by the benchmark and stopped by its PID at the end,",
    "  failed runs included: the upstream (`bench/minimal-upstream.ts` by default, `bench/simulator-entry.ts`",
    "  with `--upstream simulator`), the bare relay (`bench/bare-relay.ts`),",
    "  the gateway (`bench/gateway-entry.mjs`, the compiled gateway of dist/ as `npm start` runs it, one per store) and the peer. All listen on 127.0.0.1 only.",
    "- The load generator (autocannon) runs in the benchmark's own process, on the same cores as the servers:",
    "  the direct figure is the upstream's ceiling with that load generator, not a property of the gateway.",
    "- The gateway runs as in production: pino logs at `info` (one access line per request, written to a file),",
    "  the request log table, background workers on, a real token on a user with quota, one `gemini` and",
    "  one `openai-chat` channel to the upstream, default prices (the bench's own model names priced as",
    "  `gemini-2.5-flash`). Each content and chat call charges its estimate up front and settles on the",
    "  usage the upstream reports, in the same ledger as everything else.",
    "- The minimal upstream answers from the URL alone: `:generateContent` a fixed Gemini answer (a",
    "  1024x1024 PNG for an image model), `:streamGenerateContent` a fixed stream of three chunks (two,",
    "  200 ms apart, for the model `bench-paced` of the first-event measurement), `/chat/completions` a",
    "  fixed completion, or a fixed stream of chunks, a usage chunk and `data: [DONE]` when the body's",
    '  bytes hold `"stream":true`. Every answer reports usage, so the gateway bills as on a real upstream.',
    "- The bare relay passes the body and the key through untouched (no parsing, no auth) over one undici",
    "  pool with keep-alive, and pipes the answer back chunk by chunk; it relays `/v1beta/models/*` and",
    "  `/v1/chat/completions` alike.",
    `- The peer is installed with \`npm install --prefix <temporary folder> --ignore-scripts ${results.peer.package}\``,
    "  at bench time, never as a dependency of the project, and started with its own Node server",
    "  (`build/start-server.js --port=N --headless`, `NODE_ENV=production`). Its server listens on every",
    "  interface by default; a preloaded module (`bench/peer-preload.mjs`) makes it bind 127.0.0.1. It is",
    "  called as its users call it: `POST /v1/chat/completions` with `x-portkey-provider: google` and",
    "  `x-portkey-custom-host: <upstream>`, so it translates an OpenAI-style chat request into Gemini",
    "  `generateContent` (and `streamGenerateContent` for `stream: true`) and the answer back. For the",
    "  chat load it is called with `x-portkey-provider: openai` and `x-portkey-custom-host: <upstream>/v1`",
    "  (OpenAI chat in and out, no translation) when that route streams, else like its Gemini stream",
    `  load; in this run the openai route ${openAiChatRoute(results)}. Its native pass-through`,
    "  (`POST /v1/models/{model}:generateContent` with the same headers as the Gemini loads) is tried",
    `  once per run and not loaded; in this run it ${nativeRoute(results)}.`,
    "- Time to first event: a small HTTP client, one keep-alive connection, timing from the start of",
    "  each request to the first complete `data:` line, p50 and p99 over the streams.",
    "- RSS is read from /proc for each process: after start-up, sampled every 200 ms while it is under",
    "  load, and its peak (VmHWM) at the end. The highest sample under the relay loads and the highest",
    "  under the image load are kept apart: the RSS target compares the gateway with the bare relay under",
    "  the loads both serve.",
    "- Server CPU is the process's user + system time from /proc/<pid>/stat over the measured seconds,",
    "  divided by the requests it answered; for the gateway it includes its SQLite checkpoint thread.",
    "- Task figures come from `bench/tasks-bench.ts`, run after the servers above have stopped.",
    "",
    "## Running it",
    "",
    "```",
    USAGE,
    "```",
    "",
    "The whole run takes about twelve minutes on a 2-core machine with the defaults (three rounds of the",
    "three loads, then the task benchmark; `--skip tasks` leaves that out). `--quick` takes under a minute",
    "(`npm run bench:quick` writes nothing) and is what test/bench/quick-run.test.ts runs. `--profile`",
    "records a CPU profile of the SQLite gateway during its own loads of the last round and adds its hot",
    "spots to this page. After editing bench/report.ts, regenerate this page from a saved run without",
    "measuring again: `node --import tsx bench/report.ts bench/results/<date>.json`.",
    "",
  ];
}
