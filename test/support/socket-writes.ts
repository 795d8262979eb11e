/**
 * Counts the writes that reach a socket from now on (its `_write` and `_writev`, each one write of
 * the socket): how a test tells one write of a turn's text from several.
 */
export function countSocketWrites(socket: unknown): () => number {
  let writes = 0;
  const own = socket as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ["_write", "_writev"]) {
    const write = own[name] as (...args: unknown[]) => unknown;
    own[name] = function (this: unknown, ...args: unknown[]) {
      writes++;
      return write.apply(this, args);
    };
  }
  return () => writes;
}
