import path from "node:path";
import type { Config } from "../config/load.js";
import { StoreLinkedError } from "../store/sqlite/database-file.js";
import { StoreOwnedError } from "../store/sqlite/owner-lock.js";

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

/**
 * SQLite: a data directory (or database file) the gateway cannot create or write, a file another
 * process owns (whatever path named it there), or a database file with a second name (a hard link).
 */
export function explainSqliteFailure(err: unknown, config: Config): StartupError | null {
  const file = config.databaseUrl.slice("sqlite:".length);
  // DATABASE_URL unset names the file gateway.sqlite in DATA_DIR (see config/defaults.ts).
  const derived = path.resolve(file) === path.resolve(config.dataDir, "gateway.sqlite");
  const setting = derived ? "DATA_DIR" : "DATABASE_URL";
  const target = derived ? config.dataDir : file;
  const given = `${setting}=${derived ? config.dataDir : config.databaseUrl}`;
  const own = `set ${setting} to ${derived ? "a directory" : "a file"} of its own`;
  const options = { cause: err };
  if (err instanceof StoreOwnedError) {
    return new StartupError(
      setting,
      `the SQLite store ${err.file} (from ${given}) is in use by another gateway process (${err.ownerPid === null ? "pid unknown" : `pid ${err.ownerPid}`})`,
      `only one process may serve from one SQLite file, whatever path names it: stop that process first, or ${own}`,
      options,
    );
  }
  if (err instanceof StoreLinkedError) {
    return new StartupError(
      setting,
      `the SQLite ${err.what} ${err.file} (from ${given}) has ${err.links} hard links, and SQLite keeps a write-ahead log per name, so a second name corrupts the database`,
      `a SQLite database file must have one name: remove its other links (\`find / -samefile ${err.file}\` lists them), copy the file instead of linking it, or ${own}`,
      options,
    );
  }
  const denied =
    codeOf(err, [
      "EACCES",
      "EPERM",
      "EROFS",
      "ENOTDIR",
      "ENOENT",
      "ELOOP",
      "SQLITE_CANTOPEN",
      "SQLITE_READONLY",
      "ERR_SQLITE_ERROR",
    ]) ?? chain(err).find((e) => /unable to open database file|readonly database|read-only/i.test(e.message));
  if (!denied) return null;
  return new StartupError(
    setting,
    `cannot create or write the SQLite database in ${target} (${reason(err)})`,
    `give the gateway's user write access there, or set ${setting} to a writable ${derived ? "directory" : "file"}`,
    options,
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
