import type { ServerResponse } from "node:http";

const RESOLVED = Promise.resolve();

/**
 * Gathers what a streamed answer writes in one turn of the event loop into one write of the
 * response: the upstream often sends several events in one packet, and the last of them comes with
 * the end of the stream. The text of a turn is joined and written once at its end (one chunk of
 * the chunked answer, one pass through Node's write path, instead of one per event); the last
 * events leave with the end of the answer in `end`.
 *
 * Back-pressure: when a turn's write finds the socket's buffer full, the writes of the turns after
 * it wait for 'drain' (or the client's leaving) before more is produced; what one turn produced is
 * never held back.
 */
export class TurnWrites {
  private pending = "";
  private flushAt: NodeJS.Immediate | null = null;
  /** Set by holdForEnd: what is written from then on leaves with the end. */
  private held = false;
  /** Set while the socket's buffer is full after a write: resolved on 'drain' or 'close'. */
  private blocked: Promise<void> | null = null;
  private readonly flushNow = () => this.flush();

  constructor(private readonly raw: ServerResponse) {}

  /**
   * Adds text to this turn's write. Resolves at once, unless an earlier turn's write found the
   * socket's buffer full: then once it has drained or the client has gone.
   */
  write(text: string): Promise<void> {
    const raw = this.raw;
    if (raw.destroyed || raw.writableEnded) return RESOLVED;
    this.pending += text;
    if (!this.held) this.flushAt ??= setImmediate(this.flushNow);
    return this.blocked ?? RESOLVED;
  }

  /**
   * The answer has nothing more to relay and ends once its call is settled: what this turn
   * gathered, and anything written after, leaves with the end in `end`, one write instead of two
   * when the settlement takes longer than the turn (a round trip to PostgreSQL). The answer is
   * complete no later than before; only its last events wait for its end.
   */
  holdForEnd(): void {
    this.held = true;
    if (this.flushAt) {
      clearImmediate(this.flushAt);
      this.flushAt = null;
    }
  }

  /** Writes what this turn gathered. */
  flush(): void {
    if (this.flushAt) {
      clearImmediate(this.flushAt);
      this.flushAt = null;
    }
    const text = this.pending;
    if (text === "") return;
    this.pending = "";
    const raw = this.raw;
    if (raw.destroyed || raw.writableEnded) return;
    if (raw.write(text) || this.blocked) return;
    this.blocked = new Promise((resolve) => {
      const done = () => {
        raw.off("drain", done);
        raw.off("close", done);
        this.blocked = null;
        resolve();
      };
      raw.on("drain", done);
      raw.on("close", done);
    });
  }

  /** Ends the answer: what this turn gathered, then `last` (if given), leave with its end. */
  end(last?: string): void {
    if (this.flushAt) {
      clearImmediate(this.flushAt);
      this.flushAt = null;
    }
    const text = last === undefined ? this.pending : this.pending + last;
    this.pending = "";
    if (this.raw.destroyed || this.raw.writableEnded) return;
    if (text === "") this.raw.end();
    else this.raw.end(text);
  }
}
