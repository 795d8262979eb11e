import { parseArgs } from "node:util";
import { resetAdminKey } from "../auth/admin-key.js";
import { configFilePath, loadConfigWithFile } from "../config/file.js";
import { type Config, loadConfig } from "../config/load.js";
import { isGatewayError } from "../core/errors.js";
import type { ChangeTopic } from "../events/change-bus.js";
import { RedisChangeBus } from "../events/redis-change-bus.js";
import { openCommandStore } from "../wiring/command-line.js";
import { COMMANDS as ENTITY_COMMANDS } from "./admin-commands.js";
import { CHANNEL_POOL_COMMANDS } from "./channel-pool-commands.js";
import { UsageError } from "./flags.js";
import { humanText } from "./human-output.js";
import {
  OPERATOR_USAGE,
  operatorPassword,
  type PasswordInput,
  parseOperatorArgs,
  runOperatorCommand,
} from "./operator-commands.js";

const COMMANDS = { ...ENTITY_COMMANDS, ...CHANNEL_POOL_COMMANDS };

/** Exit codes of `media-gateway admin ...` (docs/admin-cli.md). */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, conflict: 4 } as const;

const USAGE = `usage: media-gateway admin <what> <verb> [arguments] [options] [--json]
Works on the configured store directly (DATABASE_URL / DATA_DIR, or CONFIG_FILE), without HTTP.

${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join("\n")}
  key reset   (a new admin key for a lost one, printed once; only its hash is stored)
${Object.values(OPERATOR_USAGE)
  .map((u) => `  ${u}`)
  .join("\n")}

--json prints the result as one JSON line (field names as in the admin API).
Exit codes: 0 done, 1 failure (store unreachable...), 2 usage or invalid value (nothing written),
3 not found, 4 conflict with the current state (a revoked token, a channel still in use).`;

/**
 * Tells running gateways through Redis (when configured) to drop what changed; without Redis, or
 * if it cannot be reached, their caches expire on their own. The change is stored either way.
 */
async function announceChanges(io: AdminIo, config: Config, changed: Set<ChangeTopic>): Promise<void> {
  if (changed.size === 0 || !config.redisUrl) return;
  try {
    await RedisChangeBus.announceOnce(config.redisUrl, config.redisKeyPrefix, changed);
  } catch (err) {
    io.stderr.write(
      `note: the change is stored, but running gateways could not be told through Redis (${err instanceof Error ? err.message : String(err)}); they see it when their caches expire\n`,
    );
  }
}

function configure(env: NodeJS.ProcessEnv): Config {
  const file = configFilePath(undefined, env);
  return file ? loadConfigWithFile(file, env) : loadConfig(env);
}

/** Where a command writes: the process's streams, or a test's. */
export interface AdminIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Where `operator create` reads the password when no file is given. */
  stdin?: PasswordInput;
}

function fail(io: AdminIo, code: number, message: string, withUsage: string | null): number {
  io.stderr.write(`${message}\n${withUsage === null ? "" : `usage: media-gateway admin ${withUsage}\n`}`);
  return code;
}

/** Runs one admin command against the configured store; returns the exit code. */
export async function runAdminCommand(args: string[], io: AdminIo = process): Promise<number> {
  const [what, verb, ...rest] = args;
  if (!what || what === "--help" || what === "-h" || what === "help") {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const name = `${what} ${verb ?? ""}`.trim();
  if (name === "key reset") return keyReset(rest, io);
  if (what === "operator") return operatorCommand(verb, rest, io);
  const cmd = COMMANDS[name];
  if (!cmd) return fail(io, EXIT.usage, `unknown admin command "${name}"\n${USAGE}`, null);

  let prepared: unknown;
  let json = false;
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(Object.keys(cmd.flags).map((f) => [f, { type: "string" as const }])),
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      io.stdout.write(`usage: media-gateway admin ${cmd.usage}\n`);
      return EXIT.ok;
    }
    json = values.json === true;
    prepared = cmd.prepare({ values, positionals });
  } catch (err) {
    const message = err instanceof UsageError ? err.message : parseArgsMessage(err);
    if (message === null) throw err;
    return fail(io, EXIT.usage, message, cmd.usage);
  }

  const config = configure(io.env);
  const store = openCommandStore(config);
  try {
    await store.migrate();
    const changed = new Set<ChangeTopic>();
    const result = await cmd.run(store.admin(config, changed), prepared as never);
    io.stdout.write(json ? `${JSON.stringify(result)}\n` : humanText(result));
    await announceChanges(io, config, changed);
    return EXIT.ok;
  } catch (err) {
    if (!isGatewayError(err)) return failure(io, err);
    const code = err.status === 404 ? EXIT.notFound : err.status === 409 ? EXIT.conflict : EXIT.usage;
    return fail(io, code, err.message, code === EXIT.usage ? cmd.usage : null);
  } finally {
    await store.close();
  }
}

/** A failure that is not the command's fault (the store unreachable...): one line, exit 1. */
function failure(io: AdminIo, err: unknown): number {
  const detail =
    io.env.LOG_LEVEL === "debug" && err instanceof Error
      ? (err.stack ?? err.message)
      : String(err instanceof Error ? err.message : err);
  io.stderr.write(`admin command failed: ${detail}\n`);
  return EXIT.failure;
}

/** parseArgs's own errors (an unknown or mistyped flag, a flag without its value) in one line. */
function parseArgsMessage(err: unknown): string | null {
  const code = (err as { code?: string }).code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS")) return null;
  const message = (err as Error).message.split("\n")[0] ?? "";
  return message.replace(/\. To specify a positional argument.*$/, "").replace(/^Unknown option/, "unknown option");
}

async function keyReset(rest: string[], io: AdminIo): Promise<number> {
  let json = false;
  try {
    const { values } = parseArgs({ args: rest, strict: true, options: { json: { type: "boolean" } } });
    json = values.json === true;
  } catch (err) {
    const message = parseArgsMessage(err);
    if (message === null) throw err;
    return fail(io, EXIT.usage, message, "key reset [--json]");
  }
  const config = configure(io.env);
  if (config.adminKey) {
    return fail(
      io,
      EXIT.usage,
      "ADMIN_KEY is set, and a gateway takes its admin key from there before the store: change ADMIN_KEY instead (nothing was written)",
      null,
    );
  }
  const store = openCommandStore(config);
  try {
    await store.migrate();
    const key = await resetAdminKey(store.settings);
    io.stdout.write(
      json
        ? `${JSON.stringify({ admin_key: key })}\n`
        : `New admin key (shown once; only its hash is stored):\n  admin key: ${key}\nRunning gateways accept it, and refuse the old one, within 10 seconds.\n`,
    );
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** `admin operator create|list|disable|enable`: console operator accounts (docs/console-security.md). */
async function operatorCommand(verb: string | undefined, rest: string[], io: AdminIo): Promise<number> {
  const usage = verb && verb in OPERATOR_USAGE ? OPERATOR_USAGE[verb as keyof typeof OPERATOR_USAGE] : null;
  let inv: ReturnType<typeof parseOperatorArgs>;
  let password: string | null = null;
  const config = configure(io.env);
  try {
    inv = parseOperatorArgs(verb, rest);
    if (inv.verb === "create") password = await operatorPassword(inv, io.stdin, (t) => io.stderr.write(t));
  } catch (err) {
    const message = err instanceof UsageError ? err.message : parseArgsMessage(err);
    if (message === null) throw err;
    return fail(io, EXIT.usage, message, usage);
  }
  const store = openCommandStore(config);
  try {
    await store.migrate();
    const done = await runOperatorCommand(store.operators, inv, password, config.console.passwordCost);
    if (done.exit !== "ok") return fail(io, EXIT[done.exit], done.message ?? "", null);
    io.stdout.write(inv.json ? `${JSON.stringify(done.result)}\n` : humanText(done.result));
    return EXIT.ok;
  } catch (err) {
    return failure(io, err);
  } finally {
    await store.close();
  }
}
