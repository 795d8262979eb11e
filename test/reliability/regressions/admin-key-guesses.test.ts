import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { callGateway } from "../harness.js";

/**
 * Admin key guesses are slowed like token guesses (`limits.authFailuresPerMinute`), and the right
 * admin key is never slowed by them.
 */
describe("admin key guesses [sqlite]", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { logLevel: "warn", limits: { authFailuresPerMinute: 3 } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("are refused with 429 and Retry-After once the address is over the limit", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await callGateway(gw.url, "GET", "/api/admin/users", { headers: { "x-admin-key": `guess-${i}` } });
      expect(res.status).toBe(401);
    }
    const next = await callGateway(gw.url, "GET", "/api/admin/users", { headers: { "x-admin-key": "guess-next" } });
    expect(next.status).toBe(429);
    expect(Number(next.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const right = await callGateway(gw.url, "GET", "/api/admin/users", { headers: { "x-admin-key": gw.adminKey } });
    expect(right.status).toBe(200);
  });
});
