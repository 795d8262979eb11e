import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

const MODEL = "gemini-2.5-flash";

/**
 * A server that accepts TCP connections and never says a word: a TLS handshake with it never
 * completes, so a connection to it over https never opens.
 */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An upstream that answers 200 with the start of a body and then never finishes it. */
async function stallingServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"candidates": [');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("a channel's settings", () => {
  let gw: TestGateway;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let stalling: Awaited<ReturnType<typeof stallingServer>>;

  beforeAll(async () => {
    silent = await silentServer();
    stalling = await stallingServer();
    gw = await startTestGateway("sqlite", { routing: { maxAttempts: 1 } });
  });
  afterAll(async () => {
    await gw?.close();
    await silent?.close();
    await stalling?.close();
  });

  const generate = async (model: string, key: string) => {
    const started = Date.now();
    const res = await fetch(`${gw.url}/v1beta/models/${model}:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": key },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    });
    await res.arrayBuffer();
    return { status: res.status, elapsed: Date.now() - started };
  };

  it("gives up connecting to an upstream after the channel's connect timeout, not the 10 s default", async () => {
    await gw.createChannel({
      name: "never-connects",
      type: "gemini",
      key: "k",
      models: [MODEL],
      baseUrl: `https://127.0.0.1:${silent.port}`,
      settings: { connectTimeoutMs: 300, firstByteTimeoutMs: 60_000, timeoutMs: 60_000 },
    });
    const { key } = await gw.createUser({ quota: 50_000_000 });
    const { status, elapsed } = await generate(MODEL, key);
    expect(status).toBeGreaterThanOrEqual(500);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
  });

  it("ends a call whose answer does not complete within the channel's whole-call timeout", async () => {
    const model = "gemini-2.5-pro";
    await gw.createChannel({
      name: "never-finishes",
      type: "gemini",
      key: "k",
      models: [model],
      baseUrl: `http://127.0.0.1:${stalling.port}`,
      settings: { timeoutMs: 400 },
    });
    const { key } = await gw.createUser({ quota: 50_000_000 });
    const { status, elapsed } = await generate(model, key);
    expect(status).toBeGreaterThanOrEqual(500);
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(3000);
  });

  it("refuses a setting outside its bounds, in the admin API as in the config file", async () => {
    const res = await gw.admin("POST", "/channels", {
      name: "too-eager",
      type: "gemini",
      base_url: "http://127.0.0.1:1",
      key: "k",
      models: [MODEL],
      settings: { connect_timeout_ms: 10 },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("connect_timeout_ms");
    const seed = { name: "too-eager", type: "gemini" as const, base_url: "http://127.0.0.1:1", models: [MODEL] };
    expect(() => loadConfig({}, { channels: [{ ...seed, key: "k", settings: { connectTimeoutMs: 10 } }] })).toThrow(
      /channels\[0\]\.settings\.connectTimeoutMs/,
    );
    expect(() => loadConfig({}, { channels: [{ ...seed, key: "k", settings: { concurrency: 1001 } }] })).toThrow(
      /concurrency/,
    );
  });
});
