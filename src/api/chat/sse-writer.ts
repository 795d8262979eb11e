import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { TurnWrites } from "../turn-writes.js";

/**
 * A server-sent-events answer written straight to the socket: the reply is taken over from
 * Fastify on the first event, every event leaves at the end of the turn of the event loop it was
 * written in (the events of one turn in one write, see TurnWrites), and a full socket buffer
 * holds the writer back.
 */
export class SseWriter {
  private started = false;
  private readonly turn: TurnWrites;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    this.turn = new TurnWrites(reply.raw);
  }

  private get raw(): ServerResponse {
    return this.reply.raw;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.reply.hijack();
    this.raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      "x-request-id": this.request.id,
    });
  }

  /** One event: an optional `event:` name and one line of JSON data. */
  send(data: string, event?: string): Promise<void> {
    this.start();
    return this.turn.write(event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }

  /** Nothing more will be relayed: what is written from now on leaves with the end (see TurnWrites). */
  holdForEnd(): void {
    this.turn.holdForEnd();
  }

  /**
   * After the relay returned: an answer left unfinished (its client went away) is torn down, so
   * that its connection does not linger and hold up a graceful shutdown.
   */
  dispose(): void {
    if (this.started && !this.raw.writableEnded) this.raw.destroy();
  }

  /** Ends the answer: its last events and its end leave in one write. */
  end(): void {
    this.start();
    this.turn.end();
  }
}
