import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * A server-sent-events answer written straight to the socket: the reply is taken over from
 * Fastify on the first event, every event leaves as soon as it is written (events written in one
 * turn of the event loop share one socket write), and a full socket buffer holds the writer back.
 */
export class SseWriter {
  private started = false;
  /** The pending end of the current turn's gathering, while the response is corked. */
  private uncorkAt: NodeJS.Immediate | null = null;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {}

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
    this.gather();
    return this.write(`${event ? `event: ${event}\n` : ""}data: ${data}\n\n`);
  }

  /**
   * After the relay returned: an answer left unfinished (its client went away) is torn down, so
   * that its connection does not linger and hold up a graceful shutdown.
   */
  dispose(): void {
    if (this.started && !this.raw.writableEnded) this.raw.destroy();
  }

  end(): void {
    this.start();
    // Never ended corked: on Node 24 that drops the events written in the same turn.
    this.flush();
    if (!this.raw.destroyed) this.raw.end();
  }

  private write(text: string): Promise<void> {
    const raw = this.raw;
    if (raw.destroyed || raw.writableEnded) return Promise.resolve();
    if (raw.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        raw.off("drain", done);
        raw.off("close", done);
        resolve();
      };
      raw.on("drain", done);
      raw.on("close", done);
    });
  }

  private gather(): void {
    const raw = this.raw;
    if (this.uncorkAt || raw.destroyed) return;
    raw.cork();
    this.uncorkAt = setImmediate(() => this.flush());
  }

  /** Sends what this turn gathered. */
  private flush(): void {
    if (!this.uncorkAt) return;
    clearImmediate(this.uncorkAt);
    this.uncorkAt = null;
    this.raw.uncork();
  }
}
