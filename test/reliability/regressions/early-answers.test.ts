import net from "node:net";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { errorProblem, parseJsonBody, surfaceOf } from "../surface-shapes.js";

/**
 * Before: a 5 MB body to a task route got its 413 with `connection: close`, and the socket was
 * closed about 2 ms later while the client was still sending. A client that writes its whole body
 * before it reads (Node's fetch, undici) saw EPIPE or a reset and never the answer. Now the rest
 * of the body is read and discarded, up to a bound in bytes and in time, before the answer goes.
 */
const LIMIT = 1024 * 1024;
const DRAIN_BYTES = 8 * 1024 * 1024;
const FIVE_MB = 5 * 1000 * 1000;

describe("early answers to clients still sending their body [sqlite]", () => {
  let gw: TestGateway;
  let key: string;
  let port: number;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", {
      logLevel: "warn",
      bodies: {
        content: { maxBytes: LIMIT, maxDepth: 16 },
        chat: { maxBytes: LIMIT, maxDepth: 16 },
        images: { maxBytes: LIMIT, maxDepth: 16 },
        tasks: { maxBytes: LIMIT, maxDepth: 16 },
        admin: { maxBytes: LIMIT, maxDepth: 16 },
      },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 60_000,
        bodyIdleTimeoutMs: 5000,
        keepAliveTimeoutMs: 5000,
        checkIntervalMs: 1000,
        earlyAnswerDrainBytes: DRAIN_BYTES,
        earlyAnswerDrainMs: 1500,
      },
    });
    key = (await gw.createUser({ quota: 1_000_000 })).key;
    port = Number(new URL(gw.url).port);
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** A JSON body of `size` bytes whose one string is too long for the limit. */
  const bigJson = (size: number) => {
    const head = '{"prompt":"';
    return Buffer.from(`${head}${"x".repeat(size - head.length - 2)}"}`);
  };

  const expectTooLarge = (path: string, status: number, contentType: string, text: string) => {
    expect(status, text).toBe(413);
    expect(errorProblem(surfaceOf(path), 413, parseJsonBody(contentType, text)), text).toBeNull();
    expect(text).toContain(`${LIMIT} bytes`);
  };

  /**
   * The client runs on a thread of its own, as it would in its own process: on the gateway's
   * thread its writes would wait for the gateway's reads and never race its close. Each call is
   * made `tries` times: the failure it guards against depended on timing (met in 3 calls of 5).
   */
  function fromClientThread(
    client: "fetch" | "fetch-stream" | "fetch-form" | "undici",
    path: string,
    headers: Record<string, string>,
    tries = 4,
  ): Promise<Array<{ status: number; contentType: string; connection: string; text: string } | { error: string }>> {
    const code = `
      const { parentPort, workerData: w } = require("node:worker_threads");
      const { Readable } = require("node:stream");
      const { request } = require("undici");
      const head = '{"prompt":"';
      const body = Buffer.from(head + "x".repeat(w.size - head.length - 2) + '"}');
      async function once() {
        try {
          if (w.client === "undici") {
            const res = await request(w.url, { method: "POST", headers: w.headers, body });
            const h = res.headers;
            return { status: res.statusCode, contentType: String(h["content-type"]), connection: String(h.connection), text: await res.body.text() };
          }
          const init = { method: "POST", headers: w.headers, body };
          if (w.client === "fetch-stream") {
            const chunks = function* () { for (let at = 0; at < body.length; at += 65536) yield body.subarray(at, at + 65536); };
            init.body = Readable.toWeb(Readable.from(chunks()));
            init.duplex = "half";
          } else if (w.client === "fetch-form") {
            const form = new FormData();
            form.set("prompt", "a cat");
            form.set("input_reference", new Blob([new Uint8Array(w.size)], { type: "image/png" }), "ref.png");
            init.body = form;
          }
          const res = await fetch(w.url, init);
          const h = res.headers;
          return { status: res.status, contentType: h.get("content-type") ?? "", connection: h.get("connection") ?? "", text: await res.text() };
        } catch (err) {
          return { error: String(err.cause?.code ?? err.code ?? err.message) };
        }
      }
      (async () => {
        const out = [];
        for (let i = 0; i < w.tries; i++) out.push(await once());
        parentPort.postMessage(out);
      })();
    `;
    const worker = new Worker(code, {
      eval: true,
      workerData: { client, url: `${gw.url}${path}`, headers, size: FIVE_MB, tries },
    });
    return new Promise((resolve, reject) => {
      worker.once("message", (out) => {
        void worker.terminate();
        resolve(out);
      });
      worker.once("error", reject);
    });
  }

  it.each([
    ["Node's fetch, sending 5 MB with a length", "fetch", "/audioa/submit/MUSIC"],
    ["Node's fetch, streaming 5 MB without a length", "fetch-stream", "/v1/chat/completions"],
    ["undici's request, sending 5 MB", "undici", "/v1beta/models/gemini-2.5-flash:generateContent"],
    ["Node's fetch, sending a 5 MB multipart video", "fetch-form", "/v1/videos"],
  ] as const)("%s, reads the 413 in the surface's shape", async (_name, client, path) => {
    const auth: Record<string, string> = path.startsWith("/v1beta")
      ? { "x-goog-api-key": key }
      : { authorization: `Bearer ${key}` };
    const headers = client === "fetch-form" ? auth : { ...auth, "content-type": "application/json" };
    for (const answer of await fromClientThread(client, path, headers)) {
      expect("error" in answer ? answer.error : null).toBeNull();
      if ("error" in answer) continue;
      expectTooLarge(path, answer.status, answer.contentType, answer.text);
      expect(answer.connection).toBe("close");
    }
  });

  /**
   * Writes the head and the whole body on a raw socket, and only then reads. Resolves with what
   * the server wrote, or with the error the writes met.
   */
  function writeThenRead(head: string, body: Buffer): Promise<{ writeError: string | null; answer: string }> {
    return new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      let answer = "";
      let writeError: string | null = null;
      const giveUp = setTimeout(() => socket.destroy(new Error("still open")), 15_000);
      socket.on("error", (err: NodeJS.ErrnoException) => {
        writeError ??= err.code ?? err.message;
      });
      socket.on("close", () => {
        clearTimeout(giveUp);
        resolve({ writeError, answer });
      });
      socket.on("connect", () => {
        socket.write(head);
        socket.write(body, (err) => {
          if (err) return;
          socket.on("data", (d: Buffer) => {
            answer += d.toString("utf8");
            if (wholeAnswer(answer)) socket.destroy();
          });
        });
      });
    });
  }

  /** Whether `text` holds a whole answer: its head and as many bytes as its length says. */
  const wholeAnswer = (text: string) => {
    const end = text.indexOf("\r\n\r\n");
    const length = /content-length: (\d+)/i.exec(text.slice(0, end));
    return end >= 0 && length !== null && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1]);
  };

  const rawHead = (path: string, length: number, auth: string) =>
    `POST ${path} HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("a raw client that writes its whole 5 MB body before reading sees the 413 and its JSON", async () => {
    const body = bigJson(FIVE_MB);
    const { writeError, answer } = await writeThenRead(rawHead("/audioa/fetch", body.length, key), body);
    expect(writeError).toBeNull();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    const [headers = "", text = ""] = answer.split("\r\n\r\n");
    expect(headers.toLowerCase()).toContain("connection: close");
    expectTooLarge("/audioa/fetch", 413, "application/json", text);
  });

  it("a raw client with a wrong key, writing 5 MB before reading, sees its 401", async () => {
    const body = bigJson(FIVE_MB);
    const { writeError, answer } = await writeThenRead(rawHead("/audioa/fetch", body.length, "sk-wrong"), body);
    expect(writeError).toBeNull();
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    const text = answer.split("\r\n\r\n")[1] ?? "";
    expect(errorProblem("envelope", 401, JSON.parse(text))).toBeNull();
  });

  it("a body far beyond the discard bound is cut: the server stops reading and closes", async () => {
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let written = 0;
    const closed = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      const giveUp = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 10_000);
      socket.on("error", () => {});
      socket.on("close", () => {
        clearTimeout(giveUp);
        resolve(true);
      });
      socket.on("connect", () => {
        socket.write(rawHead("/audioa/fetch", 1024 * 1024 * 1024, key));
        const pump = () => {
          while (!socket.destroyed && written < 1024 * 1024 * 1024) {
            written += chunk.length;
            if (!socket.write(chunk)) return void socket.once("drain", pump);
          }
        };
        pump();
      });
    });
    expect(closed).toBe(true);
    // The client got no further than the bound and what the sockets' buffers hold.
    expect(written).toBeLessThan(DRAIN_BYTES + 64 * 1024 * 1024);
  });

  it("a client still sending when the discard time is over is cut", async () => {
    // 100 KB a second: far above any minimum rate, yet the 1 GB it announces cannot arrive in time.
    const closed = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      let timer: NodeJS.Timeout | undefined;
      const giveUp = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 10_000);
      socket.on("error", () => {});
      socket.on("close", () => {
        clearInterval(timer);
        clearTimeout(giveUp);
        resolve(true);
      });
      socket.on("connect", () => {
        socket.write(rawHead("/audioa/fetch", 1024 * 1024 * 1024, key));
        timer = setInterval(() => socket.write(Buffer.alloc(10 * 1024, 0x20)), 100);
      });
    });
    expect(closed).toBe(true);
  });

  it("after a drained 401 the connection carries the next request", async () => {
    const small = Buffer.from('{"ids":["task_x"]}');
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      let received = "";
      socket.on("data", (d: Buffer) => {
        received += d.toString("utf8");
        if ((received.match(/HTTP\/1\.1 /g) ?? []).length === 2 && received.trimEnd().endsWith("}")) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on("connect", () => {
        const body = bigJson(2 * LIMIT);
        socket.write(rawHead("/audioa/fetch", body.length, "sk-wrong"));
        socket.write(body);
        socket.write(rawHead("/audioa/fetch", small.length, key));
        socket.write(small);
      });
    });
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(["401", "200"]);
  });
});
