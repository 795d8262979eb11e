const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * PostgreSQL's answers that say "not now" rather than "wrong": too many connections (53300) and
 * the server starting or stopping (57P03); and the pool's own words when no connection came free
 * (or none could be opened) in its connection timeout, which carry no code.
 */
const PG_BUSY_CODES = new Set(["53300", "57P03"]);
const POOL_BUSY_MESSAGES = new Set([
  "timeout exceeded when trying to connect",
  "Connection terminated due to connection timeout",
]);

/**
 * True when `err` (or an error it wraps) says the store could not take the request now, and the
 * request may simply be retried: SQLite's "database is locked" (another process held the write
 * lock past the busy timeout; better-sqlite3 names the result code `SQLITE_BUSY...`, node:sqlite
 * gives its number in `errcode`, extended codes keeping the primary code in the low byte), or
 * PostgreSQL's pool out of connections for its whole connection timeout (a burst larger than the
 * pool) or the server refusing connections for a while.
 */
export function isStoreBusy(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true;
  if (typeof code === "string" && PG_BUSY_CODES.has(code)) return true;
  if (err instanceof Error && code === undefined && POOL_BUSY_MESSAGES.has(err.message)) return true;
  const errcode = (err as { errcode?: unknown }).errcode;
  if (typeof errcode === "number" && [SQLITE_BUSY, SQLITE_LOCKED].includes(errcode & 0xff)) return true;
  return isStoreBusy((err as { cause?: unknown }).cause, depth + 1);
}
