import path from "node:path";
import type { Config } from "./config.js";

/**
 * A start-up failure an operator can act on, in one line: the setting, what was wrong, what to
 * do. The library's own error is kept as the cause (shown with LOG_LEVEL=debug).
 */
export class StartupError extends Error {
  override readonly name = "StartupError";

  constructor(
    readonly setting: string,
    problem: string,
    fix: string,
    options?: ErrorOptions,
  ) {
    super(`${setting}: ${problem}; ${fix}`, options);
  }
}

type Failure = Error & { code?: string; errno?: number; syscall?: string; address?: string; port?: number };

/** The error and its causes, outermost first (a migration failure wraps the driver's error). */
function chain(err: unknown): Failure[] {
  const out: Failure[] = [];
  let current: unknown = err;
  while (current instanceof Error && out.length < 10) {
    out.push(current as Failure);
    current = (current as { cause?: unknown }).cause;
  }
  // An AggregateError (a host with several addresses) carries the connection errors inside.
  for (const e of [...out]) if (e instanceof AggregateError) out.push(...(e.errors as Failure[]));
  return out;
}

function codeOf(err: unknown, codes: readonly string[]): Failure | undefined {
  return chain(err).find((e) => e.code !== undefined && codes.includes(e.code));
}

const UNREACHABLE = [
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
];

/** `host:port` of a URL, never its user or password. */
function endpoint(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || "localhost"}:${parsed.port || defaultPort}`;
  } catch {
    return "(an unreadable URL)";
  }
}

function reason(err: unknown): string {
  const inner = chain(err).find((e) => e.code !== undefined) ?? chain(err).at(-1);
  const text = inner?.code ?? inner?.message ?? String(err);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** PostgreSQL: a missing database, refused credentials, or a server that cannot be reached. */
export function explainPostgresFailure(err: unknown, databaseUrl: string): StartupError | null {
  const where = endpoint(databaseUrl, 5432);
  let database = "";
  let user = "";
  try {
    const url = new URL(databaseUrl);
    database = decodeURIComponent(url.pathname.replace(/^\//, ""));
    user = decodeURIComponent(url.username);
  } catch {
    // Shown as it is below.
  }
  const options = { cause: err };
  if (codeOf(err, ["3D000"])) {
    return new StartupError(
      "DATABASE_URL",
      `database "${database}" does not exist on the PostgreSQL server at ${where}`,
      `create it (createdb -h ${where.split(":")[0]} -U ${user || "postgres"} ${database}) or name an existing database in DATABASE_URL`,
      options,
    );
  }
  if (codeOf(err, ["28P01", "28000"])) {
    return new StartupError(
      "DATABASE_URL",
      `the PostgreSQL server at ${where} refused user "${user}" (wrong password or no access)`,
      "correct the user and password in DATABASE_URL",
      options,
    );
  }
  const timedOut = chain(err).some((e) => /timeout|terminated/i.test(e.message));
  if (codeOf(err, UNREACHABLE) || timedOut) {
    return new StartupError(
      "DATABASE_URL",
      `no PostgreSQL server could be reached at ${where} (${reason(err)})`,
      "start PostgreSQL or correct the host and port in DATABASE_URL",
      options,
    );
  }
  return null;
}

/** SQLite: a data directory (or database file) the gateway cannot create or write. */
export function explainSqliteFailure(err: unknown, config: Config): StartupError | null {
  const file = config.databaseUrl.slice("sqlite:".length);
  const denied =
    codeOf(err, ["EACCES", "EPERM", "EROFS", "ENOTDIR", "SQLITE_CANTOPEN", "SQLITE_READONLY", "ERR_SQLITE_ERROR"]) ??
    chain(err).find((e) => /unable to open database file|readonly database|read-only/i.test(e.message));
  if (!denied) return null;
  const derived = path.resolve(path.dirname(file)) === path.resolve(config.dataDir);
  const setting = derived ? "DATA_DIR" : "DATABASE_URL";
  const target = derived ? config.dataDir : file;
  return new StartupError(
    setting,
    `cannot create or write the SQLite database in ${target} (${reason(err)})`,
    `give the gateway's user write access there, or set ${setting} to a writable ${derived ? "directory" : "file"}`,
    { cause: err },
  );
}

/** Redis: a server that cannot be reached or refuses the connection. */
export function explainRedisFailure(err: unknown, redisUrl: string): StartupError {
  return new StartupError(
    "REDIS_URL",
    `no Redis server could be reached at ${endpoint(redisUrl, 6379)} (${reason(err)})`,
    "start Redis or correct REDIS_URL (a single instance may run without it: unset REDIS_URL)",
    { cause: err },
  );
}

/** The listening socket: a port in use or not allowed, an address not of this machine. */
export function explainListenFailure(err: unknown, host: string, port: number): StartupError | null {
  const options = { cause: err };
  if (codeOf(err, ["EADDRINUSE"])) {
    return new StartupError(
      "PORT",
      `${host}:${port} is already in use by another process`,
      "stop that process or choose a free port with PORT (or serve --port)",
      options,
    );
  }
  if (codeOf(err, ["EACCES"])) {
    return new StartupError(
      "PORT",
      `this user may not listen on port ${port}`,
      "choose a port above 1023 with PORT (or serve --port)",
      options,
    );
  }
  if (codeOf(err, ["EADDRNOTAVAIL", "ENOTFOUND", "EAI_AGAIN"])) {
    return new StartupError(
      "HOST",
      `${host} is not an address of this machine`,
      "set HOST to one of its addresses (0.0.0.0 for all of them)",
      options,
    );
  }
  return null;
}

/** Runs one start-up step; a failure `explain` recognises becomes its StartupError. */
export async function startupStep<T>(step: () => T | Promise<T>, explain: (err: unknown) => Error | null): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw explain(err) ?? err;
  }
}
