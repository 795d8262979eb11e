import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

const UPSTREAM_KEY = "sim-upstream-key";

/** One request on a connection of its own; the raw answer, headers as the server wrote them. */
function call(url: string, method: string, headers: Record<string, string> = {}, body?: unknown) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers: { ...headers, ...(payload ? { "content-type": "application/json" } : {}) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("the readiness delay of a stop", () => {
  let sim: Simulator;
  let gw: TestGateway;
  let key: string;
  let stopped = false;

  beforeAll(async () => {
    sim = await startSimulator({ keys: [UPSTREAM_KEY] });
    gw = await startTestGateway("sqlite", { logLevel: "silent" }, { keepStore: true });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, key: UPSTREAM_KEY, models: ["gemini-2.5-flash"] });
    key = (await gw.createUser()).key;
  });
  afterAll(async () => {
    if (!stopped) await gw.close();
    await gw.dropStore();
    await sim.close();
  });

  it("answers /readyz with 503 while every other request is still served, each closing its connection; then stops listening", async () => {
    const before = await call(`${gw.url}/readyz`, "GET");
    expect(before.status).toBe(200);

    // A delay far longer than the test: it is ended below as a second signal would end it.
    const skipDelay = new AbortController();
    const shutDown = gw.gateway.shutDown({ delayMs: 600_000, drainMs: 1000, skipDelay: skipDelay.signal });

    const ready = await call(`${gw.url}/readyz`, "GET");
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({ status: "unavailable", stopping: true });
    expect((await call(`${gw.url}/healthz`, "GET")).status).toBe(200);

    // New connections are still accepted and requests served in full, billed as usual.
    const answer = await call(
      `${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`,
      "POST",
      { "x-goog-api-key": key },
      { contents: [{ role: "user", parts: [{ text: "served while stopping" }] }] },
    );
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text).candidates).toHaveLength(1);
    // A client kept alive here is told to reconnect (through its balancer, to another instance).
    expect(answer.headers.connection).toBe("close");
    const admin = await call(`${gw.url}/api/admin/users`, "GET", { authorization: `Bearer ${gw.adminKey}` });
    expect(admin.status).toBe(200);
    expect(admin.headers.connection).toBe("close");

    skipDelay.abort();
    await shutDown;
    stopped = true;
    await expect(call(`${gw.url}/healthz`, "GET")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
