/** Settings of `npm run bench`: flags first, then BENCH_* environment variables, then short defaults. */
import { parseArgs } from "node:util";

/** What the servers relay to: the fixed-answer upstream (the relay's own cost) or the simulator (the whole system). */
export type UpstreamKind = "minimal" | "simulator";
export type SkippableStep = "peer" | "tasks" | "images" | "stream" | "chat";
const SKIPPABLE: readonly SkippableStep[] = ["peer", "tasks", "images", "stream", "chat"];

export interface BenchOptions {
  upstream: UpstreamKind;
  /** A run of a few seconds per path (see USAGE): for a smoke test, not for figures. */
  quick: boolean;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Rounds of each throughput load: every target once per round, in turn. */
  rounds: number;
  /** Sequential streams timed for the first event, per target. */
  firstEventRequests: number;
  /**
   * Users of each gateway, each with a token and ample quota; a gateway's load is spread over
   * their tokens (1: one hot user).
   */
  users: number;
  /** Also run the gateway on PostgreSQL (a temporary database, dropped at the end). */
  postgres: boolean;
  postgresUrl: string;
  peerVersion: string;
  /** Reuse a peer install in this folder instead of a fresh temporary one. */
  peerDir: string | null;
  /** Write a CPU profile of the gateway (node --cpu-prof) and summarize its hot spots. */
  profile: boolean;
  skip: Set<SkippableStep>;
  tasksTimeoutSeconds: number;
  /** Run the task benchmark at its own full scale (10,000 tasks in flight, 1,000,000 stored). */
  tasksFull: boolean;
  /** Write bench/results/<date>.json and regenerate docs/benchmarks.md. */
  write: boolean;
}

export const USAGE = `npm run bench -- [options]
  --upstream KIND        what every path relays to (BENCH_UPSTREAM_KIND, default minimal): minimal, a
                         fixed answer and a fixed SSE stream that cost far less than a relay
                         (bench/minimal-upstream.ts), or simulator, the full upstream simulator
  --quick                a smoke run of a few seconds per path: 1 round of 1 s, no warm-up,
                         8 connections, 5 first-event streams, peer and tasks left out (the flags
                         below still win when given; --skip replaces what it leaves out)
  --connections N        concurrent connections of each load (BENCH_CONNECTIONS, default 32)
  --duration S           seconds of each measured load (BENCH_DURATION, default 5)
  --warmup S             seconds of warm-up before each load, not counted (BENCH_WARMUP, default 3)
  --rounds N             rounds of each throughput load, every target once per round; figures are
                         medians over rounds (BENCH_ROUNDS, default 3)
  --first-events N       sequential streams timed for the first event (BENCH_FIRST_EVENTS, default 40)
  --users N              users of each gateway, each with its token and quota, the gateways' loads
                         spread over their tokens (BENCH_USERS, default 1: one hot user)
  --pg                   also run the gateway on PostgreSQL (BENCH_PG=1; BENCH_PG_URL, default
                         postgres://postgres@127.0.0.1:5432/postgres: a temporary database is made and dropped)
  --peer-version V       version of @portkey-ai/gateway to install (BENCH_PEER_VERSION, default latest)
  --peer-dir DIR         reuse a peer install kept in DIR (BENCH_PEER_DIR)
  --profile              CPU-profile the gateway process and list its hot spots
  --skip a,b             leave out: peer, tasks, images, stream, chat
  --tasks-full           task benchmark at its full scale (10,000 in flight, 1,000,000 stored); by
                         default 2,000 and 200,000 (its BENCH_TASKS / BENCH_STORE_ROWS win when set)
  --tasks-timeout S      longest run of the task benchmark (BENCH_TASKS_TIMEOUT, default 600)
  --no-write             print the results only; write neither bench/results nor docs`;

function number(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${value}"`);
  return n;
}

/** Reads the options; throws with a clear message on a bad value. */
export function readOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      upstream: { type: "string" },
      quick: { type: "boolean" },
      connections: { type: "string" },
      duration: { type: "string" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      "first-events": { type: "string" },
      users: { type: "string" },
      pg: { type: "boolean" },
      "peer-version": { type: "string" },
      "peer-dir": { type: "string" },
      profile: { type: "boolean" },
      skip: { type: "string" },
      "tasks-timeout": { type: "string" },
      "tasks-full": { type: "boolean" },
      "no-write": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const quick = values.quick === true || /^(1|true|yes)$/i.test(env.BENCH_QUICK ?? "");
  // --skip, when given, replaces what --quick leaves out.
  const skip = new Set<SkippableStep>(quick && values.skip === undefined ? ["peer", "tasks"] : []);
  for (const item of (values.skip ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(SKIPPABLE as readonly string[]).includes(item)) {
      throw new Error(`--skip takes ${SKIPPABLE.join(", ")}, got "${item}"`);
    }
    skip.add(item as SkippableStep);
  }
  const upstream = values.upstream ?? env.BENCH_UPSTREAM_KIND ?? "minimal";
  if (upstream !== "minimal" && upstream !== "simulator") {
    throw new Error(`--upstream takes minimal or simulator, got "${upstream}"`);
  }
  const connections = Math.round(number(values.connections ?? env.BENCH_CONNECTIONS, quick ? 8 : 32, "--connections"));
  if (connections < 1) throw new Error("--connections must be at least 1");
  const users = Math.round(number(values.users ?? env.BENCH_USERS, 1, "--users"));
  if (users < 1) throw new Error("--users must be at least 1");
  return {
    upstream,
    quick,
    connections,
    durationSeconds: Math.max(1, number(values.duration ?? env.BENCH_DURATION, quick ? 1 : 5, "--duration")),
    warmupSeconds: number(values.warmup ?? env.BENCH_WARMUP, quick ? 0 : 3, "--warmup"),
    rounds: Math.max(1, Math.round(number(values.rounds ?? env.BENCH_ROUNDS, quick ? 1 : 3, "--rounds"))),
    firstEventRequests: Math.max(
      1,
      Math.round(number(values["first-events"] ?? env.BENCH_FIRST_EVENTS, quick ? 5 : 40, "--first-events")),
    ),
    users,
    postgres: values.pg === true || /^(1|true|yes)$/i.test(env.BENCH_PG ?? ""),
    postgresUrl: env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
    peerVersion: values["peer-version"] ?? env.BENCH_PEER_VERSION ?? "latest",
    peerDir: values["peer-dir"] ?? env.BENCH_PEER_DIR ?? null,
    profile: values.profile === true,
    skip,
    tasksTimeoutSeconds: number(values["tasks-timeout"] ?? env.BENCH_TASKS_TIMEOUT, 600, "--tasks-timeout"),
    tasksFull: values["tasks-full"] === true,
    write: values["no-write"] !== true,
  };
}
