import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Gathers what a streamed answer writes in one turn of the event loop into one socket write: the
 * upstream often sends several events in one packet, and the last of them comes with the end of
 * the stream. The socket itself is corked, not the response: ending a corked response drops the
 * events written in its turn on Node 24, and on Node 24 a corked response does not gather its
 * writes either. So the last events and the end of the answer leave in one write, on both.
 */
export class TurnWrites {
  private corked: Socket | null = null;
  private uncorkAt: NodeJS.Immediate | null = null;
  private readonly flushNow = () => this.flush();

  constructor(private readonly raw: ServerResponse) {}

  /** Called before a write: the writes of this turn leave together at its end (never later). */
  gather(): void {
    if (this.uncorkAt) return;
    const socket = this.raw.socket;
    if (!socket || socket.destroyed) return;
    socket.cork();
    this.corked = socket;
    this.uncorkAt = setImmediate(this.flushNow);
  }

  /** Sends what this turn gathered. */
  flush(): void {
    if (!this.uncorkAt) return;
    clearImmediate(this.uncorkAt);
    this.uncorkAt = null;
    const socket = this.corked;
    this.corked = null;
    socket?.uncork();
  }

  /** Ends the answer (with `last`, if given) and sends it with what this turn gathered. */
  end(last?: string): void {
    if (!this.raw.destroyed) {
      if (last === undefined) this.raw.end();
      else this.raw.end(last);
    }
    this.flush();
  }
}
