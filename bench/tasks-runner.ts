/**
 * Runs the task benchmark (bench/tasks-bench.ts) as a child process, bounded in time, and keeps
 * the JSON lines it prints. It is skipped, with a note, when the file is not there.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import type { TaskFigures } from "./results.js";

/** Runs the task benchmark on SQLite, or on PostgreSQL when `postgresUrl` is given. */
export async function runTaskBenchmark(
  root: string,
  timeoutSeconds: number,
  postgresUrl: string | null,
  full: boolean,
  log: (line: string) => void,
): Promise<TaskFigures> {
  const store = postgresUrl ? "postgres" : "sqlite";
  const script = path.join(root, "bench", "tasks-bench.ts");
  if (!existsSync(script)) return { store, ran: false, note: "bench/tasks-bench.ts is not there", results: [] };
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (!full) {
    // A smaller scale keeps the whole run to a few minutes; its own knobs, when set, win.
    env.BENCH_TASKS ??= "2000";
    env.BENCH_STORE_ROWS ??= "200000";
    env.BENCH_FETCHES ??= "500";
    // Tasks finish 20 s after submit instead of 120 s: long enough for 2,000 to be in flight at once.
    env.BENCH_COMPLETE_MS ??= "20000";
    // The submit load (gateway and simulator in processes of their own): 5 s after 2 s of warm-up.
    env.BENCH_SUBMIT_SECONDS ??= "5";
    env.BENCH_SUBMIT_WARMUP ??= "2";
  }
  if (postgresUrl) env.BENCH_DATABASE_URL = postgresUrl;
  else delete env.BENCH_DATABASE_URL;
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Never outlive the benchmark, even when it ends early.
  const killOnExit = () => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, "SIGKILL");
  process.once("exit", killOnExit);
  const results: Record<string, unknown>[] = [];
  let stderr = "";
  let buffered = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      log(`  tasks: ${line}`);
      if (!line.startsWith("{")) continue;
      try {
        results.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a line that only looks like JSON
      }
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(child.pid, "SIGTERM");
    setTimeout(
      () => child.exitCode === null && child.pid !== undefined && process.kill(child.pid, "SIGKILL"),
      5000,
    ).unref();
  }, timeoutSeconds * 1000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  process.off("exit", killOnExit);
  const durationSeconds = Math.round((performance.now() - started) / 100) / 10;
  if (timedOut) return { store, ran: false, note: `stopped after ${timeoutSeconds} s`, durationSeconds, results };
  if (code !== 0) {
    const last = stderr.trim().split("\n").slice(-3).join(" | ");
    return { store, ran: false, note: `exited with code ${code}: ${last}`, durationSeconds, results };
  }
  return { store, ran: true, durationSeconds, results };
}
