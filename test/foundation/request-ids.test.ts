import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("request ids", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite");
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("are time-ordered UUIDs: ids handed out one after another sort in the same order", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${gw.url}/audioa/fetch/task_unknown`);
      ids.push(res.headers.get("x-request-id") as string);
    }
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("keep an id the client sent, and bill under a reference of the gateway's own, also time-ordered", async () => {
    const { userId, key } = await gw.createUser({ quota: 100_000_000 });
    await gw.createChannel({ type: "gemini", baseUrl: "http://127.0.0.1:9", models: ["gemini-2.5-flash"] });
    const res = await fetch(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": key, "x-request-id": "client-chosen-1" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    // The only channel refuses connections: the call fails, and its charge is refunded.
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.headers.get("x-request-id")).toBe("client-chosen-1");
    const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 10 });
    const references = [...new Set(rows.filter((r) => r.reference.startsWith("content:")).map((r) => r.reference))];
    expect(references).toHaveLength(1);
    expect(references[0]?.slice("content:".length)).toMatch(UUID_V7);
    expect(await gw.balance(userId)).toBe(100_000_000);
  });
});
