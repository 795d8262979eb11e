/**
 * True when `err` (or an error it wraps) is SQLite's "database is locked": another process held
 * the write lock past the busy timeout. The request may simply be retried.
 */
export function isStoreBusy(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true;
  return isStoreBusy((err as { cause?: unknown }).cause, depth + 1);
}
