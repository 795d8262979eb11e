import { parseArgs } from "node:util";
import { buildGateway } from "./app/gateway.js";
import { runAdminCommand } from "./cli/admin.js";
import { configFilePath, loadConfigWithFile } from "./config/file.js";
import { ConfigError, type ConfigOverrides, loadConfig } from "./config/load.js";
import { applyHeapSettings } from "./lifecycle/heap-settings.js";
import { StartupError } from "./lifecycle/startup-errors.js";
import { openStore } from "./store/database.js";
import { migrateToLatest } from "./store/migrate.js";
import { StoreLinkedError } from "./store/sqlite/database-file.js";
import { StoreOwnedError } from "./store/sqlite/owner-lock.js";

const USAGE = `usage: media-gateway <command>
  serve [--role all|api|worker] [--port N] [--config FILE]
                                              run the gateway (default command); FILE or
                                              CONFIG_FILE: a YAML or JSON config file
  migrate [--config FILE]                     apply database migrations and exit
  admin ...                                   manage users, tokens, channels and prices on the
                                              store; reset a lost admin key (admin --help)
  simulate [--port N] [--seed N]              run the upstream simulator
  demo [--port N]                             simulator + gateway, seeded, with a command per endpoint`;

/** The configuration: defaults < config file (`--config` or CONFIG_FILE) < environment < flags. */
function configure(flag: string | undefined, overrides: ConfigOverrides = {}) {
  const file = configFilePath(flag, process.env);
  return file ? loadConfigWithFile(file, process.env, overrides) : loadConfig(process.env, overrides);
}

/** `--port N`: a whole number, checked like PORT (a word would otherwise become NaN). */
function portFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new ConfigError(`invalid flag --port: must be a whole number (got "${value}")`);
  return Number(value);
}

async function serve(args: string[]) {
  applyHeapSettings();
  const { values } = parseArgs({
    args,
    options: { role: { type: "string" }, port: { type: "string" }, config: { type: "string" } },
  });
  const config = configure(values.config, {
    role: values.role as "all" | "api" | "worker" | undefined,
    port: portFlag(values.port),
  });
  const gateway = await buildGateway(config);
  if (gateway.generatedAdminKey) {
    // Printed once, on the first start; only its hash is stored.
    process.stderr.write(
      `\nNo ADMIN_KEY was set, so one was generated. Keep it: it will not be shown again.\n  admin key: ${gateway.generatedAdminKey}\n\n`,
    );
  }
  const url = await gateway.listen();
  const { store } = gateway.ctx;
  // On SQLite, which driver this runtime got (node:sqlite or better-sqlite3, see docs/operations.md).
  const sqliteDriver = store.sqlite ? { sqliteDriver: store.sqlite.driver } : {};
  gateway.ctx.logger.info({ url, role: config.role, store: store.dialect, ...sqliteDriver }, "gateway listening");
  // A second signal during the readiness delay ends the delay: the listener closes at once.
  const skipDelay = new AbortController();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      skipDelay.abort();
      return;
    }
    stopping = true;
    const delayMs = config.shutdownDelayMs;
    const drainMs = config.shutdownGraceMs;
    gateway.ctx.logger.info({ signal, delayMs, drainMs }, "shutting down");
    // Past the delay, the drain window and the store's own close, something is stuck: stop regardless.
    const force = setTimeout(
      () => {
        gateway.ctx.logger.error("shutdown did not complete, exiting");
        process.exit(1);
      },
      delayMs + drainMs + 10_000,
    );
    force.unref();
    await gateway.shutDown({ delayMs, drainMs, skipDelay: skipDelay.signal });
    gateway.ctx.logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

async function simulate(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, seed: { type: "string" }, host: { type: "string" } },
  });
  // Loaded on demand: the production image ships without the simulator and the demo.
  const { startSimulator } = await import("./simulator/server.js");
  const sim = await startSimulator({
    port: values.port === undefined ? 4000 : Number(values.port),
    host: values.host ?? "127.0.0.1",
    seed: values.seed === undefined ? 1 : Number(values.seed),
  });
  process.stdout.write(`simulator listening on ${sim.url}\n`);
  const stop = async () => {
    await sim.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

async function migrate(args: string[]) {
  const { values } = parseArgs({ args, options: { config: { type: "string" } } });
  const config = configure(values.config);
  const store = openStore(config.databaseUrl, { owner: true, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  const applied = await migrateToLatest(store);
  await store.close();
  process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "nothing to apply\n");
}

async function main(argv: string[]) {
  const [command = "serve", ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "migrate":
      return migrate(rest);
    case "admin":
      process.exitCode = await runAdminCommand(rest);
      return;
    case "simulate":
      return simulate(rest);
    case "demo": {
      const { values } = parseArgs({ args: rest, options: { port: { type: "string" } } });
      const port = values.port ?? process.env.PORT;
      const { runDemo } = await import("./app/demo.js");
      return runDemo(port === undefined || port === "" ? 3000 : Number(port));
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      process.stderr.write(`unknown command "${command}"\n${USAGE}\n`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // One line an operator can act on; the stack and the library's own error with LOG_LEVEL=debug.
  const debug = /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? "");
  const message = err instanceof Error ? err.message : String(err);
  const kind = err instanceof ConfigError ? "configuration error" : "cannot start";
  const hint =
    err instanceof ConfigError ||
    err instanceof StartupError ||
    err instanceof StoreOwnedError ||
    err instanceof StoreLinkedError ||
    debug
      ? ""
      : " (LOG_LEVEL=debug shows more)";
  process.stderr.write(`media-gateway: ${kind}: ${message.replace(/\s*\n\s*/g, " ")}${hint}\n`);
  if (debug) {
    for (let e: unknown = err; e instanceof Error; e = e.cause) process.stderr.write(`${e.stack ?? e.message}\n`);
  }
  process.exit(1);
});
