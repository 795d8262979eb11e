import pino, { type DestinationStream } from "pino";

/** Bytes of log lines gathered before they are written (a few dozen access lines). */
export const LOG_GATHER_BYTES = 8192;
/** The longest a gathered line waits before it is written, on a quiet gateway. */
export const LOG_GATHER_MS = 100;

/** What the gateway uses of pino's asynchronous destination (a SonicBoom). */
interface FileStream {
  /** Bytes held and not yet written. */
  _len: number;
  write(text: string): boolean;
  flush(done?: (err?: Error) => void): void;
  flushSync(): void;
}

/** The hand-ons of every gathering destination of the process, run when it exits. */
const atExit = new Set<() => void>();

/**
 * Runs `hand` when the process exits. The one listener is registered before the first
 * destination of pino registers its own write at exit, so it runs first: the gathered lines reach
 * the destination, which then writes them synchronously with whatever it holds.
 */
function handOnAtExit(hand: () => void): void {
  if (atExit.size === 0) {
    process.once("exit", () => {
      for (const each of atExit) each();
    });
  }
  atExit.add(hand);
}

/**
 * The gateway's log destination: stdout (or the file given), written asynchronously, with lines
 * gathered up to LOG_GATHER_BYTES so that a busy gateway makes one write call for many lines
 * instead of about one per request (each write a system call on the thread pool and a callback).
 * A quiet gateway's lines wait at most LOG_GATHER_MS: a timer writes whatever is gathered. What
 * is gathered is written when the gateway closes (`stop`) and at exit, lines logged after the
 * stop included; a process killed outright loses at most that. A write of the destination still
 * under way at exit may land after the lines written then.
 *
 * The lines are gathered here, in one string, and handed to pino's destination a whole gathering
 * at a time, which it writes at once (its `minLength`). Handed a line at a time, it measured the
 * bytes of everything it held on every line (a walk of up to 8 KB per line, about 1% of the
 * gateway's CPU under load).
 */
export function gatheringDestination(fd: number | string = 1): { stream: DestinationStream; stop(): Promise<void> } {
  let gathered = "";
  const hand = () => {
    if (gathered.length === 0) return;
    const text = gathered;
    gathered = "";
    file.write(text);
  };
  // Before pino's destination registers its own write at exit: see handOnAtExit.
  handOnAtExit(hand);
  const file = pino.destination({ dest: fd, sync: false, minLength: LOG_GATHER_BYTES }) as unknown as FileStream;
  // A short gathering is held by the destination until flushed; an empty flush would write 0 bytes.
  const handAndFlush = (done?: (err?: Error) => void) => {
    hand();
    if (file._len > 0) file.flush(done);
    else done?.();
  };
  const timer = setInterval(handAndFlush, LOG_GATHER_MS);
  timer.unref();
  const stream: DestinationStream & Pick<FileStream, "flush" | "flushSync"> = {
    write(line: string) {
      gathered += line;
      // UTF-16 units: at most the bytes, so a gathering of non-ASCII text is written a little later.
      if (gathered.length >= LOG_GATHER_BYTES) hand();
    },
    flush: handAndFlush,
    flushSync() {
      hand();
      file.flushSync();
    },
  };
  return {
    stream,
    stop() {
      // The exit still hands on what is logged after the stop (the gateway's last lines).
      clearInterval(timer);
      return new Promise<void>((resolve) => handAndFlush(() => resolve()));
    },
  };
}
