const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * True when `err` (or an error it wraps) is SQLite's "database is locked": another process held
 * the write lock past the busy timeout. The request may simply be retried. better-sqlite3 names the
 * result code (`SQLITE_BUSY...`); node:sqlite gives its number (`errcode`, extended codes keeping
 * the primary code in the low byte).
 */
export function isStoreBusy(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true;
  const errcode = (err as { errcode?: unknown }).errcode;
  if (typeof errcode === "number" && [SQLITE_BUSY, SQLITE_LOCKED].includes(errcode & 0xff)) return true;
  return isStoreBusy((err as { cause?: unknown }).cause, depth + 1);
}
