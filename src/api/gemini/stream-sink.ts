import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ContentSink } from "../../core/content/ports.js";
import type { GatewayError } from "../../errors.js";
import { errorBody } from "../surfaces.js";

/** `sse`: `data: <json>\r\n\r\n` blocks; `json-array`: one JSON array written element by element. */
export type StreamFormat = "sse" | "json-array";

/** Writes and waits for 'drain' when the socket buffer is full; never waits on a closed client. */
function write(raw: ServerResponse, text: string): Promise<void> {
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

/**
 * The client side of a streamed answer. The reply is taken over from Fastify on the first event,
 * so nothing buffers it: each chunk is written to the socket as soon as the upstream sent it.
 */
export function clientStreamSink(request: FastifyRequest, reply: FastifyReply, format: StreamFormat): ContentSink {
  const raw = reply.raw;
  let started = false;

  const start = () => {
    if (started) return;
    started = true;
    reply.hijack();
    raw.writeHead(200, {
      "content-type": format === "sse" ? "text/event-stream" : "application/json; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      "x-request-id": request.id,
    });
  };

  const block = (json: string, first: boolean) =>
    format === "sse" ? `data: ${json}\r\n\r\n` : `${first ? "[" : ",\r\n"}${json}`;

  return {
    async event(chunk) {
      const first = !started;
      start();
      await write(raw, block(JSON.stringify(chunk), first));
    },
    async fail(error: GatewayError) {
      const first = !started;
      start();
      await write(raw, block(JSON.stringify(errorBody("google", error)), first));
      if (!raw.destroyed) raw.end(format === "json-array" ? "]" : undefined);
    },
    async end() {
      const first = !started;
      start();
      if (raw.destroyed) return;
      if (format === "json-array") raw.end(first ? "[]" : "]");
      else raw.end();
    },
  };
}
