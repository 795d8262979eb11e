import Fastify, { type FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientStreamSink } from "../../src/api/gemini/stream-sink.js";
import { GatewayError } from "../../src/core/errors.js";
import { countSocketWrites } from "../support/socket-writes.js";

const chunk = (n: number) => {
  const value = { candidates: [{ content: { parts: [{ text: `part ${n}` }] }, index: 0 }] };
  return { value, text: JSON.stringify(value) };
};

let socketWrites: () => number = () => 0;

/**
 * The stream sink gathers the events of one event-loop turn into one socket write. An answer that
 * ends in the same turn as its last events (an upstream that sends its final chunk and closes in
 * one packet) must still deliver them: ending a corked response lost them on Node 24.
 */
describe("content stream sink", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = Fastify();
    app.get("/end", (req, reply) => {
      const sink = clientStreamSink(req, reply, "sse");
      for (let n = 1; n <= 3; n++) void sink.event(chunk(n));
      void sink.end();
    });
    app.get("/fail", (req, reply) => {
      const sink = clientStreamSink(req, reply, "sse");
      void sink.event(chunk(1));
      void sink.fail(new GatewayError("GW_ERR_UPSTREAM"));
    });
    app.get("/settling", (req, reply) => {
      socketWrites = countSocketWrites(reply.raw.socket);
      const sink = clientStreamSink(req, reply, "sse");
      void sink.event(chunk(1));
      setTimeout(() => {
        for (let n = 2; n <= 3; n++) void sink.event(chunk(n));
        // The upstream's stream is over; its settlement takes some turns.
        sink.settling();
        setTimeout(() => void sink.end(), 20);
      }, 10);
    });
    app.get("/array", (req, reply) => {
      const sink = clientStreamSink(req, reply, "json-array");
      for (let n = 1; n <= 2; n++) void sink.event(chunk(n));
      void sink.end();
    });
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await app.close();
  });

  it("delivers every event written in the turn that ends the answer", async () => {
    for (let round = 0; round < 20; round++) {
      const text = await (await request(`${url}/end`)).body.text();
      const events = text.split("\r\n\r\n").filter(Boolean);
      expect(events.map((e) => JSON.parse(e.slice("data: ".length)).candidates[0].content.parts[0].text)).toEqual([
        "part 1",
        "part 2",
        "part 3",
      ]);
    }
  });

  it("delivers the error event written in the turn that ends the answer", async () => {
    const text = await (await request(`${url}/fail`)).body.text();
    const events = text.split("\r\n\r\n").filter(Boolean);
    expect(events).toHaveLength(2);
    expect(JSON.parse(events[1]!.slice("data: ".length))).toMatchObject({ error: { code: 502 } });
  });

  it("sends the events written once the call is settling together with the end, in one write", async () => {
    const text = await (await request(`${url}/settling`, { headers: { connection: "close" } })).body.text();
    const events = text.split("\r\n\r\n").filter(Boolean);
    expect(events.map((e) => JSON.parse(e.slice("data: ".length)).candidates[0].content.parts[0].text)).toEqual([
      "part 1",
      "part 2",
      "part 3",
    ]);
    // The head with the first event; then the last two events with the end.
    expect(socketWrites()).toBe(2);
  });

  it("closes a JSON array written in the turn that ends it", async () => {
    const body = JSON.parse(await (await request(`${url}/array`)).body.text());
    expect(body).toHaveLength(2);
  });
});
