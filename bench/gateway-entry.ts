/**
 * The gateway as a process of its own, configured from the environment the benchmark gives it:
 *   BENCH_DATABASE_URL  sqlite:<file> or postgres://...
 *   BENCH_DATA_DIR      folder for blobs (images) and the SQLite file
 *   BENCH_ADMIN_KEY     admin key the benchmark uses to create users, tokens and channels
 *   BENCH_LOG_LEVEL     log level (default info: the gateway logs every request as in production)
 * Logs go to stdout, which the benchmark sends to a file. Listens on 127.0.0.1, free port.
 */
import { buildGateway } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { announceReady, stopOnSignal } from "./child-process-ipc.js";
import { serveProfilerOverIpc } from "./cpu-profiler.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const config = loadConfig(
  {},
  {
    host: "127.0.0.1",
    port: 0,
    dataDir: required("BENCH_DATA_DIR"),
    databaseUrl: required("BENCH_DATABASE_URL"),
    adminKey: required("BENCH_ADMIN_KEY"),
    logLevel: (process.env.BENCH_LOG_LEVEL ?? "info") as "info",
  },
);
const gateway = await buildGateway(config);
const url = await gateway.listen(0);
stopOnSignal(() => gateway.close());
serveProfilerOverIpc();
announceReady({ url, store: gateway.ctx.store.dialect });
