import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/core/upstream-error.js";
import { callUpstreamForText, callUpstreamStreaming } from "../../src/upstreams/direct-call.js";
import { networkError } from "../../src/upstreams/http.js";
import { type LocalUpstream, listenLocal, recording, type SeenRequest } from "../support/local-upstream.js";

describe("an upstream call read whole as text", () => {
  let upstream: LocalUpstream;
  let base: string;
  const seen: SeenRequest[] = [];
  const held: IncomingMessage[] = [];
  const closed: string[] = [];

  beforeAll(async () => {
    upstream = await listenLocal(
      recording(seen, (req, res) => {
        if (req.url === "/hold") {
          held.push(req);
          res.on("close", () => closed.push("/hold"));
          return;
        }
        if (req.url === "/big") {
          res.writeHead(200, { "content-type": "text/plain" });
          for (let i = 0; i < 8; i++) res.write("x".repeat(256));
          res.end();
          return;
        }
        if (req.url === "/utf8") {
          // A multi-byte character cut between two writes.
          const bytes = Buffer.from('{"t":"héllo ✓"}');
          res.writeHead(201, { "content-type": "application/json", "x-answer": "split" });
          res.write(bytes.subarray(0, 9));
          setTimeout(() => res.end(bytes.subarray(9)), 20);
          return;
        }
        if (req.url === "/refused") {
          res.writeHead(403, { "content-type": "application/json" });
          res.end('{"error":{"message":"no"}}');
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      }),
    );
    base = upstream.base;
  });
  afterAll(() => upstream.close());

  it("sends the path with its query, the call's headers and its JSON body, and reads status, headers and text", async () => {
    seen.length = 0;
    const answer = await callUpstreamForText({
      method: "POST",
      url: `${base}/v1beta/models/m:generateContent?x=1#frag`,
      headers: { "x-goog-api-key": "k1" },
      json: { a: 1 },
    });
    expect(answer).toMatchObject({ statusCode: 200, text: '{"ok":true}' });
    expect(answer.headers["content-type"]).toBe("application/json");
    await callUpstreamForText({ method: "POST", url: `${base}/b`, jsonText: "[1]" });
    await callUpstreamForText({ method: "GET", url: `${base}/c` });
    expect(seen).toEqual([
      {
        method: "POST",
        url: "/v1beta/models/m:generateContent?x=1",
        body: '{"a":1}',
        type: "application/json",
        key: "k1",
      },
      { method: "POST", url: "/b", body: "[1]", type: "application/json" },
      { method: "GET", url: "/c", body: "" },
    ]);
  });

  it("joins the chunks of an answer before decoding it, so a character cut between two is whole", async () => {
    const answer = await callUpstreamForText({ method: "GET", url: `${base}/utf8` });
    expect(answer.statusCode).toBe(201);
    expect(answer.headers["x-answer"]).toBe("split");
    expect(JSON.parse(answer.text)).toEqual({ t: "héllo ✓" });
  });

  it("gives an error status's text to the caller, as any answer", async () => {
    const answer = await callUpstreamForText({ method: "GET", url: `${base}/refused` });
    expect(answer).toMatchObject({ statusCode: 403, text: '{"error":{"message":"no"}}' });
  });

  it("drops an answer larger than its limit as a retryable failure", async () => {
    const failure = await callUpstreamForText({ method: "GET", url: `${base}/big` }, 1000).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).kind).toBe("retryable");
    expect((failure as UpstreamError).message).toMatch(/larger than 1000 bytes/);
    // The same answer within a limit it fits is read whole.
    expect((await callUpstreamForText({ method: "GET", url: `${base}/big` }, 2048)).text).toHaveLength(2048);
  });

  it("sends nothing when the signal is aborted already", async () => {
    seen.length = 0;
    const controller = new AbortController();
    controller.abort();
    const failure = await callUpstreamForText({ method: "GET", url: `${base}/a`, signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).message).toMatch(/aborted/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([]);
  });

  it("ends the call, and its connection, when the signal is aborted while the upstream is silent", async () => {
    closed.length = 0;
    const controller = new AbortController();
    const call = callUpstreamForText({ method: "GET", url: `${base}/hold`, signal: controller.signal });
    await expect.poll(() => held.length).toBeGreaterThan(0);
    controller.abort();
    const failure = await call.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).kind).toBe("retryable");
    await expect.poll(() => closed).toEqual(["/hold"]);
  });

  it("fails an answer slower than the call's time limit, or than its first-byte limit", async () => {
    const whole = await callUpstreamForText({ method: "GET", url: `${base}/hold`, timeoutMs: 100 }).catch(
      (e: unknown) => e,
    );
    expect((whole as UpstreamError).message).toMatch(/timed out or was aborted/);
    const first = await callUpstreamForText({ method: "GET", url: `${base}/hold`, firstByteTimeoutMs: 100 }).catch(
      (e: unknown) => e,
    );
    expect((first as UpstreamError).message).toMatch(/timed out before answering/);
  });

  it("classifies an unreachable upstream and a URL that is not http(s); a body it cannot serialise is its own error", async () => {
    const port = (upstream.server.address() as AddressInfo).port;
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const freePort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    expect(freePort).not.toBe(port);
    const refused = await callUpstreamForText({ method: "GET", url: `http://127.0.0.1:${freePort}/x` }).catch(
      (e: unknown) => e,
    );
    expect((refused as UpstreamError).message).toMatch(/unreachable/);
    seen.length = 0;
    const notHttp = await callUpstreamForText({ method: "GET", url: "ftp://127.0.0.1/x" }).catch((e: unknown) => e);
    expect(notHttp).toBeInstanceOf(UpstreamError);
    const unserialisable = await callUpstreamForText({ method: "POST", url: `${base}/x`, json: { n: 1n } }).catch(
      (e: unknown) => e,
    );
    expect(unserialisable).toBeInstanceOf(TypeError);
    expect(unserialisable).not.toBeInstanceOf(UpstreamError);
    expect(seen).toEqual([]);
  });
});

describe("an upstream call read as its answer arrives", () => {
  let upstream: LocalUpstream;
  let base: string;
  /** Per path: how the server's answer went (its writes refused for a full socket, its connection closed). */
  const trace = { refusedWrites: 0, closed: [] as string[], wrote: 0 };
  let release: (() => void) | null = null;

  beforeAll(async () => {
    upstream = await listenLocal((req, res) => {
      res.on("close", () => trace.closed.push(req.url ?? ""));
      if (req.url === "/two") {
        // The second chunk only once the test has seen the first.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("one;");
        release = () => res.end("two;");
        return;
      }
      if (req.url === "/flood") {
        // 64 MiB offered as fast as the socket takes it.
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const piece = Buffer.alloc(64 * 1024, 97);
        const pump = () => {
          while (trace.wrote < 1024) {
            trace.wrote += 1;
            if (trace.wrote === 1024) {
              res.end(piece);
              return;
            }
            if (!res.write(piece)) {
              trace.refusedWrites += 1;
              res.once("drain", pump);
              return;
            }
          }
        };
        pump();
        return;
      }
      if (req.url === "/cut") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("part;");
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (req.url === "/stall") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("first;");
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("whole");
    });
    base = upstream.base;
  });
  afterAll(() => upstream.close());

  const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString("utf8");

  it("hands each chunk on as it arrives, before the upstream has sent the next", async () => {
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/two` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/event-stream");
    const first = await res.body.next();
    expect(first.done).toBe(false);
    expect(String(first.value)).toBe("one;");
    (release as () => void)();
    const rest: Buffer[] = [];
    for await (const chunk of res.body) rest.push(chunk);
    expect(text(rest)).toBe("two;");
  });

  it("pauses the upstream while its reader is behind, and still hands on every byte", async () => {
    trace.refusedWrites = 0;
    trace.wrote = 0;
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/flood` });
    // Nobody reads: the server must find the socket full rather than the gateway holding 64 MiB.
    await expect.poll(() => trace.refusedWrites, { timeout: 5000 }).toBeGreaterThan(0);
    // The socket's buffers fill until the gateway holds its few chunks; then the writes stop.
    let before = -1;
    for (let i = 0; i < 40 && trace.wrote !== before; i++) {
      before = trace.wrote;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(trace.wrote).toBe(before);
    expect(before).toBeLessThan(1024);
    let size = 0;
    for await (const chunk of res.body) size += chunk.length;
    expect(size).toBe(1024 * 64 * 1024);
  });

  it("drops the call when the reader stops early", async () => {
    trace.closed.length = 0;
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/stall` });
    for await (const chunk of res.body) {
      expect(String(chunk)).toBe("first;");
      break;
    }
    await expect.poll(() => trace.closed).toEqual(["/stall"]);
    expect(await res.body.next()).toEqual({ value: undefined, done: true });
  });

  it("fails the reader when the upstream cuts the answer short, after the chunks it did send", async () => {
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/cut` });
    const got: string[] = [];
    const failure = await (async () => {
      for await (const chunk of res.body) got.push(String(chunk));
    })().catch((e: unknown) => e);
    expect(got).toEqual(["part;"]);
    expect(failure).toBeInstanceOf(Error);
    expect(networkError(failure, `${base}/cut`).kind).toBe("retryable");
  });

  it("fails the reader when the signal is aborted, or the call's time runs out, mid-answer", async () => {
    const controller = new AbortController();
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/stall`, signal: controller.signal });
    expect(String((await res.body.next()).value)).toBe("first;");
    const waiting = res.body.next();
    controller.abort();
    const aborted = await waiting.catch((e: unknown) => e);
    expect(networkError(aborted, base).message).toMatch(/timed out or was aborted/);
    const timed = await callUpstreamStreaming({ method: "GET", url: `${base}/stall`, timeoutMs: 100 });
    const failure = await (async () => {
      for await (const _ of timed.body) {
        // the first chunk, then nothing until the time runs out
      }
    })().catch((e: unknown) => e);
    expect(networkError(failure, base).message).toMatch(/timed out or was aborted/);
  });

  it("reads a whole answer, and classifies failures before the head as the text call does", async () => {
    const res = await callUpstreamStreaming({ method: "GET", url: `${base}/whole` });
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk);
    expect(text(chunks)).toBe("whole");
    const aborted = new AbortController();
    aborted.abort();
    const before = await callUpstreamStreaming({ method: "GET", url: `${base}/whole`, signal: aborted.signal }).catch(
      (e: unknown) => e,
    );
    expect((before as UpstreamError).message).toMatch(/aborted/);
    const notHttp = await callUpstreamStreaming({ method: "GET", url: "ftp://127.0.0.1/x" }).catch((e: unknown) => e);
    expect(notHttp).toBeInstanceOf(UpstreamError);
  });
});
