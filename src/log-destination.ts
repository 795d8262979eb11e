import pino, { type DestinationStream } from "pino";

/** Bytes of log lines gathered before they are written (a few dozen access lines). */
export const LOG_GATHER_BYTES = 8192;
/** The longest a gathered line waits before it is written, on a quiet gateway. */
export const LOG_GATHER_MS = 100;

/**
 * The gateway's log destination: stdout (or the file given), written asynchronously, with lines
 * gathered up to LOG_GATHER_BYTES so that a busy gateway makes one write call for many lines
 * instead of about one per request (each write a system call on the thread pool and a callback).
 * A quiet gateway's lines wait at most LOG_GATHER_MS: a timer writes whatever is gathered. What
 * is gathered is written at exit (pino flushes its destination then) and when the gateway closes
 * (`stop`); a process killed outright loses at most that.
 */
export function gatheringDestination(fd: number | string = 1): { stream: DestinationStream; stop(): Promise<void> } {
  const stream = pino.destination({ dest: fd, sync: false, minLength: LOG_GATHER_BYTES });
  // SonicBoom keeps the length gathered and not yet written; an empty flush would write 0 bytes.
  const pending = () => (stream as unknown as { _len: number })._len > 0;
  const timer = setInterval(() => {
    if (pending()) stream.flush();
  }, LOG_GATHER_MS);
  timer.unref();
  return {
    stream,
    stop() {
      clearInterval(timer);
      if (!pending()) return Promise.resolve();
      return new Promise<void>((resolve) => stream.flush(() => resolve()));
    },
  };
}
