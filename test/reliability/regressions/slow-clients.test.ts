import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { callGateway } from "../harness.js";

/**
 * Before: no request or body timeout; 100 connections sending their bodies slowly were all still
 * open after 60 s. The limits below are injected small so that the test never waits long; they
 * bound what a client sends, never the answer it reads.
 */
const HTTP = {
  headersTimeoutMs: 300,
  requestTimeoutMs: 600,
  bodyIdleTimeoutMs: 200,
  keepAliveTimeoutMs: 300,
  checkIntervalMs: 20,
};

describe("slow clients [sqlite]", () => {
  let gw: TestGateway;
  let sim: Simulator;
  let token: string;
  let port: number;
  /** A gateway whose only short body limit is the idle one. */
  let idleOnly: TestGateway;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 6, gemini: { text: { chunkDelayMs: 250 } } });
    gw = await startTestGateway("sqlite", { logLevel: "warn", http: HTTP });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["gemini-2.5-flash"] });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
    token = (await gw.createUser({ quota: 50_000_000 })).key;
    port = Number(new URL(gw.url).port);
    idleOnly = await startTestGateway("sqlite", {
      logLevel: "warn",
      http: { ...HTTP, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 60_000 },
    });
  });
  afterAll(async () => {
    await idleOnly?.close();
    await gw?.close();
    await sim?.close();
  });

  /**
   * Opens a raw connection, runs `send` on it, and resolves with what the server wrote once it
   * closed the connection; rejects if it is still open after `giveUpMs` (far above the limits).
   */
  function closedBy(send: (socket: net.Socket) => void, giveUpMs = 5000, to = port): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(to, "127.0.0.1");
      let received = "";
      const timers: NodeJS.Timeout[] = [];
      const giveUp = setTimeout(() => {
        socket.destroy();
        reject(new Error("the connection was still open"));
      }, giveUpMs);
      socket.on("data", (d) => {
        received += d.toString("utf8");
      });
      socket.on("error", () => {});
      socket.on("close", () => {
        clearTimeout(giveUp);
        for (const t of timers) clearInterval(t);
        resolve(received);
      });
      socket.on("connect", () => send(socket));
      (socket as net.Socket & { timers?: NodeJS.Timeout[] }).timers = timers;
    });
  }

  const head = (length: number, key = token) =>
    `POST /audioa/fetch HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("a client that never finishes its headers is cut off", async () => {
    const answer = await closedBy((s) => s.write("POST /audioa/fetch HTTP/1.1\r\nHost: gw\r\n"));
    expect(answer === "" || answer.startsWith("HTTP/1.1 408")).toBe(true);
  });

  it.each([
    ["while its body is read", true],
    ["after an early answer (401) that did not wait for the body", false],
  ])("a client whose body stops half-way is cut off at the body idle limit, %s", async (_when, authorised) => {
    // The request and keep-alive limits of this gateway are a minute: only the idle limit can end it within 5 s.
    const key = authorised ? (await idleOnly.createUser()).key : "sk-wrong";
    const answer = await closedBy(
      (s) => s.write(`${head(100, key)}{"ids": [`),
      5000,
      Number(new URL(idleOnly.url).port),
    );
    expect(answer).not.toContain("200 OK");
  });

  it("a client trickling its body, never idle long, is cut off at the request limit", async () => {
    let sent = 0;
    const answer = await closedBy((s) => {
      s.write(head(1000));
      const timer = setInterval(() => {
        if (s.destroyed) return clearInterval(timer);
        s.write(" ");
        sent += 1;
      }, 50);
      (s as net.Socket & { timers?: NodeJS.Timeout[] }).timers?.push(timer);
    });
    expect(answer).not.toContain("200 OK");
    // Cut well before the 1000 bytes were sent (one byte every 50 ms would take 50 s).
    expect(sent).toBeLessThan(100);
  });

  it("an idle kept-alive connection is closed after the keep-alive limit", async () => {
    const body = '{"ids":["task_x"]}';
    const answer = await closedBy((s) => s.write(`${head(body.length)}${body}`));
    expect(answer).toContain("HTTP/1.1 200");
  });

  it("a slow stream answer to a reading client runs past every limit and arrives whole", async () => {
    const started = Date.now();
    const res = await callGateway(gw.url, "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {
      headers: { "x-goog-api-key": token },
      body: { contents: [{ role: "user", parts: [{ text: "tell me [chunks=5]" }] }] },
    });
    expect(res.status).toBe(200);
    const events = res.text.split(/\r\n\r\n/).filter((b) => b.startsWith("data: "));
    expect(events).toHaveLength(5);
    expect(JSON.parse(events[4]!.slice(6)).candidates[0].finishReason).toBe("STOP");
    // It took longer than the request limit and each pause was longer than the body idle limit.
    expect(Date.now() - started).toBeGreaterThan(HTTP.requestTimeoutMs);
  });
});
