/**
 * A bare pass-through relay for the Gemini content endpoints and OpenAI chat completions: Fastify
 * in front, one undici pool
 * behind, no auth, no billing, no logging, no JSON parsing. It is the practical limit of a Node
 * relay on this machine, the yardstick the gateway's overhead is measured against.
 *
 * Run as a process: BENCH_UPSTREAM=http://127.0.0.1:PORT node --import tsx bench/bare-relay.ts
 */
import { pathToFileURL } from "node:url";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { Pool } from "undici";
import { announceReady, stopOnSignal } from "./child-process-ipc.js";

export interface BareRelay {
  url: string;
  close(): Promise<void>;
}

/** Headers passed on in each direction; everything else is dropped, as a relay would. */
const REQUEST_HEADERS = ["content-type", "x-goog-api-key", "authorization"] as const;

/**
 * Starts the relay on 127.0.0.1 (free port unless given), forwarding `/v1beta/models/*` and
 * `/v1/chat/completions` to `upstream`.
 */
export async function startBareRelay(upstream: string, port = 0): Promise<BareRelay> {
  const pool = new Pool(upstream, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
  // The body goes upstream as the bytes that came in: a pass-through never parses it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  const relay = async (request: FastifyRequest, reply: FastifyReply) => {
    const headers: Record<string, string> = {};
    for (const name of REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const gone = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    const answer = await pool.request({
      path: request.url,
      method: "POST",
      headers,
      body: request.body as Buffer,
      signal: gone.signal,
    });
    reply.code(answer.statusCode);
    const type = answer.headers["content-type"];
    if (typeof type === "string") reply.header("content-type", type);
    const length = answer.headers["content-length"];
    if (typeof length === "string") reply.header("content-length", length);
    // A stream is written on chunk by chunk as it arrives: no buffering of server-sent events.
    return reply.send(answer.body);
  };
  app.post("/v1beta/models/:target", relay);
  app.post("/v1/chat/completions", relay);

  const url = await app.listen({ host: "127.0.0.1", port });
  return {
    url,
    async close() {
      await app.close();
      await pool.close();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const upstream = process.env.BENCH_UPSTREAM;
  if (!upstream) throw new Error("BENCH_UPSTREAM is required");
  const relay = await startBareRelay(upstream);
  stopOnSignal(() => relay.close());
  announceReady({ url: relay.url });
}
