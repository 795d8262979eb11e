/**
 * The gateway as a process of its own, as production runs it: the compiled JavaScript of dist/
 * (`npm run build`), with no TypeScript loader in the process. Configured from the environment the
 * benchmark gives it:
 *   BENCH_DATABASE_URL  sqlite:<file> or postgres://...
 *   BENCH_DATA_DIR      folder for blobs (images) and the SQLite file
 *   BENCH_ADMIN_KEY     admin key the benchmark uses to create users, tokens and channels
 *   BENCH_LOG_LEVEL     log level (default info: the gateway logs every request as in production)
 *   BENCH_TASK_SETTINGS JSON of the `tasks` settings to override (poll interval, worker tick...), for
 *                       the task loads
 * Logs go to stdout, which the benchmark sends to a file. Listens on 127.0.0.1, free port.
 * Speaks the child side of the benchmark's process protocol (child-process-ipc.ts, cpu-profiler.ts)
 * itself, since those are TypeScript.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { buildGateway } from "../dist/app/gateway.js";
import { loadConfig } from "../dist/config/load.js";
import { applyHeapSettings } from "../dist/lifecycle/heap-settings.js";

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

// As `serve` does first (its V8 heap settings).
applyHeapSettings();

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

let session = null;
process.on("message", async (message) => {
  if (message?.kind !== "profile-start" && message?.kind !== "profile-stop") return;
  try {
    if (message.kind === "profile-start") {
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 500 });
      await session.post("Profiler.start");
    } else if (session) {
      const { profile } = await session.post("Profiler.stop");
      if (message.file) writeFileSync(message.file, JSON.stringify(profile));
      session.disconnect();
      session = null;
    }
    process.send?.({ kind: `${message.kind}-done` });
  } catch (err) {
    process.send?.({ kind: `${message.kind}-done`, error: err.message });
  }
});

const ready = { ready: true, url, store: gateway.ctx.store.dialect };
if (process.send) process.send(ready);
else process.stdout.write(`${JSON.stringify(ready)}\n`);
