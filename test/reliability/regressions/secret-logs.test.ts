import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { CONTENT_BODY, callGateway } from "../harness.js";

/**
 * `?%6Bey=<token>` authenticates (the query parser decodes the name), but the access log kept the
 * token in clear: the redaction matched the raw name only. Credentials are now blanked after
 * decoding, in every place a client may put them, at every log level.
 */
const METRICS_KEY = "metrics-key-0123456789abcdef";

/** Every byte of `text` percent-encoded, in upper or lower case hex. */
const percentAll = (text: string, upper: boolean) =>
  [...Buffer.from(text)]
    .map((b) => `%${b.toString(16).padStart(2, "0")[upper ? "toUpperCase" : "toLowerCase"]()}`)
    .join("");

describe("credentials in logs, at every level [sqlite]", () => {
  let gw: TestGateway;
  let sim: Simulator;
  let token: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4 });
    gw = await startTestGateway("sqlite", { logLevel: "trace", metricsKey: METRICS_KEY });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["gemini-2.5-flash", "image-model"] });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
    token = (await gw.createUser({ quota: 50_000_000 })).key;
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it("no token, admin key or metrics key appears in any line, whatever the place and the encoding", async () => {
    const content = "/v1beta/models/gemini-2.5-flash:generateContent";
    const json = { "content-type": "application/json" };
    const calls: Array<{
      method: string;
      path: string;
      headers?: Record<string, string>;
      body?: unknown;
      ok: boolean;
    }> = [
      {
        method: "POST",
        path: "/audioa/fetch",
        headers: { authorization: `Bearer ${token}` },
        body: { ids: ["task_x"] },
        ok: true,
      },
      {
        method: "POST",
        path: "/audioa/fetch",
        headers: { authorization: `bearer   ${token}` },
        body: { ids: ["task_x"] },
        ok: true,
      },
      {
        method: "POST",
        path: "/v1/images/generations",
        headers: { authorization: `Bearer ${token}` },
        body: { model: "image-model", prompt: "a boat" },
        ok: true,
      },
      { method: "POST", path: content, headers: { "x-goog-api-key": token }, body: CONTENT_BODY, ok: true },
      { method: "POST", path: content, headers: { "X-Api-Key": token }, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?key=${token}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?%6Bey=${token}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?k%65y=${token}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?${percentAll("key", false)}=${token}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?key=${percentAll(token, true)}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?alt=sse&key=${percentAll(token, false)}`, body: CONTENT_BODY, ok: true },
      { method: "POST", path: `${content}?KEY=${token}`, body: CONTENT_BODY, ok: false },
      { method: "POST", path: `${content}?key=wrong&key=${token}`, body: CONTENT_BODY, ok: false },
      { method: "POST", path: `${content}?key=${token}&x=%zz`, body: CONTENT_BODY, ok: true },
      { method: "GET", path: `/v1beta/models/%E0%A4%A:generateContent?key=${token}`, ok: false },
      { method: "GET", path: "/api/admin/users", headers: { "x-admin-key": gw.adminKey }, ok: true },
      { method: "GET", path: "/api/admin/users", headers: { authorization: `Bearer ${gw.adminKey}` }, ok: true },
      { method: "GET", path: `/api/admin/users?key=${gw.adminKey}&admin_key=${gw.adminKey}`, ok: false },
      { method: "GET", path: "/metrics", headers: { authorization: `Bearer ${METRICS_KEY}` }, ok: true },
      { method: "GET", path: `/metrics?token=${METRICS_KEY}`, ok: false },
    ];
    for (const call of calls) {
      const res = await callGateway(gw.url, call.method, call.path, {
        headers: { ...(call.body === undefined ? {} : json), ...call.headers },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
      });
      if (call.ok) expect(res.status, `${call.path}: ${res.text}`).toBe(200);
      else expect(res.status, `${call.path}: ${res.text}`).toBeGreaterThanOrEqual(400);
    }
    await gw.gateway.ctx.requestLogs.flush();
    // The log stream is asynchronous: give it a moment to deliver the last lines.
    await new Promise((resolve) => setTimeout(resolve, 100));

    const lines = gw.logs.map((l) => JSON.parse(l) as { level: number; req?: { url: string } });
    // Lines of every level were written: trace and debug included.
    expect(lines.some((l) => l.level === 20)).toBe(true);
    expect(lines.some((l) => l.level === 30)).toBe(true);
    expect(lines.filter((l) => l.req?.url.includes("[redacted]")).length).toBeGreaterThan(10);

    const text = gw.logs.join("\n");
    for (const secret of [token, gw.adminKey, METRICS_KEY]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(percentAll(secret, true));
      expect(text).not.toContain(percentAll(secret, false));
      expect(text).not.toContain(secret.slice(3, 20));
    }
  });
});
