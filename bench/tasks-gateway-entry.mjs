/**
 * The gateway as a process of its own for the task loads: the compiled JavaScript of dist/, as
 * `npm start` runs it, configured from the environment the task benchmark gives it:
 *   BENCH_DATABASE_URL  sqlite:<file> or postgres://...
 *   BENCH_DATA_DIR      folder for blobs and the SQLite file
 *   BENCH_ADMIN_KEY     admin key the benchmark provisions with
 *   BENCH_LOG_LEVEL     log level (default info, as in production; logs go to stdout, sent to a file)
 *   BENCH_TASK_SETTINGS JSON of the `tasks` settings to override (poll interval, worker tick...)
 * Listens on 127.0.0.1, free port, and tells its parent its URL over IPC. A CPU profile is taken
 * with `--cpu-prof` on this process (written when it stops on SIGTERM).
 */
import { buildGateway } from "../dist/app.js";
import { loadConfig } from "../dist/config.js";

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const tasks = process.env.BENCH_TASK_SETTINGS ? JSON.parse(process.env.BENCH_TASK_SETTINGS) : undefined;
const config = loadConfig(
  {},
  {
    host: "127.0.0.1",
    port: 0,
    dataDir: required("BENCH_DATA_DIR"),
    databaseUrl: required("BENCH_DATABASE_URL"),
    adminKey: required("BENCH_ADMIN_KEY"),
    logLevel: process.env.BENCH_LOG_LEVEL ?? "info",
    ...(tasks ? { tasks } : {}),
  },
);
const gateway = await buildGateway(config);
const url = await gateway.listen(0);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 5000).unref();
  gateway.close().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`stop failed: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
process.once("disconnect", stop);

const ready = { ready: true, url, store: gateway.ctx.store.dialect };
if (process.send) process.send(ready);
else process.stdout.write(`${JSON.stringify(ready)}\n`);
