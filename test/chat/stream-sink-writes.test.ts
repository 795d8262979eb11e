import Fastify, { type FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnthropicEventSink } from "../../src/api/anthropic/stream-sink.js";
import { SseWriter } from "../../src/api/chat/sse-writer.js";
import { OpenAiChunkSink } from "../../src/api/openai-chat/stream-sink.js";
import type { ChatEvent } from "../../src/core/chat/canonical.js";
import type { ChatSink } from "../../src/core/chat/ports.js";
import { tokenUsage } from "../../src/core/token-usage.js";
import { countSocketWrites } from "../support/socket-writes.js";

const usage = tokenUsage({ input: 9, output: 2 });
const text = (t: string) => ({ type: "text", choice: 0, text: t }) as ChatEvent;

/**
 * A chat stream's last events, written once the relay has nothing more to relay and is settling the
 * call, wait for the end and leave with it: one write of the socket instead of two when the
 * settlement takes longer than a turn of the event loop.
 */
describe("chat stream sinks once the call is settling", () => {
  let app: FastifyInstance;
  let url: string;
  const writes = new Map<string, () => number>();
  const sinks: Record<string, (sse: SseWriter) => ChatSink> = {
    openai: (sse) => new OpenAiChunkSink(sse, { id: "chatcmpl-1", model: "m", created: 1, includeUsage: true }),
    anthropic: (sse) => new AnthropicEventSink(sse, { id: "msg_1", model: "m" }),
  };
  beforeAll(async () => {
    app = Fastify();
    app.get("/:surface", (req, reply) => {
      const surface = (req.params as { surface: string }).surface;
      writes.set(surface, countSocketWrites(reply.raw.socket));
      const sink = (sinks[surface] as (sse: SseWriter) => ChatSink)(new SseWriter(req, reply));
      void (async () => {
        await sink.event({ type: "start" } as ChatEvent);
        await sink.event(text("Hello"));
        await new Promise((resolve) => setTimeout(resolve, 10));
        await sink.event(text(" world"));
        await sink.event({ type: "finish", choice: 0, reason: "stop" } as ChatEvent);
        sink.settling();
        await new Promise((resolve) => setTimeout(resolve, 20));
        await sink.end(usage);
      })();
    });
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await app.close();
  });

  it("OpenAI chunks: the last chunks, the usage and [DONE] leave with the end", async () => {
    const body = await (await request(`${url}/openai`, { headers: { connection: "close" } })).body.text();
    const data = body
      .split("\n\n")
      .filter(Boolean)
      .map((block) => block.slice("data: ".length));
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Hello world");
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    // The head with the first turn's chunks; then the rest with the end.
    expect(writes.get("openai")?.()).toBe(2);
  });

  it("Anthropic events: the last deltas, message_delta and message_stop leave with the end", async () => {
    const body = await (await request(`${url}/anthropic`, { headers: { connection: "close" } })).body.text();
    const types = body
      .split("\n\n")
      .filter(Boolean)
      .map((block) => JSON.parse(block.split("\n")[1]!.slice("data: ".length)).type);
    expect(types).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(writes.get("anthropic")?.()).toBe(2);
  });
});
