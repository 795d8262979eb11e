import { parseArgs } from "node:util";

/** The sizes of one run: from the command line, else the environment, else the defaults. */
export interface RunOptions {
  tasks: number;
  videos: number;
  fuzzCases: number;
}

const USAGE = `npm run reliability [-- options]

Three gateway instances on one PostgreSQL and one Redis, the simulator behind them; tasks, media
calls, audio actions and videos across the instances while instances are killed with SIGKILL;
then fuzzing and the money checks. Exits 1 when any check finds a violation.

Options (each also an environment variable):
  --tasks N        MUSIC and LYRICS tasks of the task phase (RELIABILITY_TASKS, default 1000)
  --videos N       videos of the video phase, at least 3 (RELIABILITY_VIDEOS, default 40)
  --fuzz-cases N   fuzz requests against the live cluster (RELIABILITY_FUZZ_CASES, default 300)
  --help           this text

Needs TEST_DATABASE_URL and TEST_REDIS_URL (default: the local PostgreSQL and Redis).`;

function count(flag: string, raw: string | undefined, fallback: number, least: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < least) {
    process.stderr.write(`${flag} must be a whole number of at least ${least} (got "${raw}")\n`);
    process.exit(2);
  }
  return n;
}

/** Reads the run's sizes; `--help` prints the usage and exits. */
export function runOptions(argv: string[], env: NodeJS.ProcessEnv): RunOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      tasks: { type: "string" },
      videos: { type: "string" },
      "fuzz-cases": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  return {
    tasks: count("--tasks", values.tasks ?? env.RELIABILITY_TASKS, 1000, 10),
    videos: count("--videos", values.videos ?? env.RELIABILITY_VIDEOS, 40, 3),
    fuzzCases: count("--fuzz-cases", values["fuzz-cases"] ?? env.RELIABILITY_FUZZ_CASES, 300, 0),
  };
}
