import type { FastifyReply, FastifyRequest } from "fastify";
import type { ContentChunk, ContentSink } from "../../core/content/ports.js";
import type { GatewayError } from "../../core/errors.js";
import { errorBody } from "../../http/surfaces.js";
import { TurnWrites } from "../turn-writes.js";

/** `sse`: `data: <json>\r\n\r\n` blocks; `json-array`: one JSON array written element by element. */
export type StreamFormat = "sse" | "json-array";

/**
 * The JSON text of a chunk as it goes to the client: the upstream's own text, unless it spans
 * several lines, which a server-sent event's single `data:` line cannot hold.
 */
function eventJson(chunk: ContentChunk, format: StreamFormat): string {
  if (format === "sse" && (chunk.text.includes("\n") || chunk.text.includes("\r"))) return JSON.stringify(chunk.value);
  return chunk.text;
}

/**
 * The client side of a streamed answer. The reply is taken over from Fastify on the first event,
 * so nothing buffers it: each chunk is written at the end of the turn it came in (the chunks of one
 * turn in one write, see TurnWrites), as soon as the upstream sent it.
 */
class ClientStreamSink implements ContentSink {
  private started = false;
  private readonly turn: TurnWrites;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly format: StreamFormat,
  ) {
    this.turn = new TurnWrites(reply.raw);
  }

  /** Takes the reply over and writes the head; true when this call wrote it (nothing was sent before). */
  private start(): boolean {
    if (this.started) return false;
    this.started = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      "content-type": this.format === "sse" ? "text/event-stream" : "application/json; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      "x-request-id": this.request.id,
    });
    return true;
  }

  private block(json: string, first: boolean): string {
    return this.format === "sse" ? `data: ${json}\r\n\r\n` : `${first ? "[" : ",\r\n"}${json}`;
  }

  event(chunk: ContentChunk): Promise<void> {
    const first = this.start();
    return this.turn.write(this.block(eventJson(chunk, this.format), first));
  }

  settling(): void {
    this.turn.holdForEnd();
  }

  async fail(error: GatewayError): Promise<void> {
    const first = this.start();
    await this.turn.write(this.block(JSON.stringify(errorBody("google", error)), first));
    this.turn.end(this.format === "json-array" ? "]" : undefined);
  }

  /** Ends the answer: its last events and its end leave in one write. */
  async end(): Promise<void> {
    const first = this.start();
    if (this.format === "json-array") this.turn.end(first ? "[]" : "]");
    else this.turn.end();
  }
}

/** The sink of one streamed answer to the client, in the format it asked for. */
export function clientStreamSink(request: FastifyRequest, reply: FastifyReply, format: StreamFormat): ContentSink {
  return new ClientStreamSink(request, reply, format);
}
