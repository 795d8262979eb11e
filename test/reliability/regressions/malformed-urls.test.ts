import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { callGateway } from "../harness.js";
import { errorProblem, surfaceOf } from "../surface-shapes.js";

/**
 * A path with broken percent-encoding (`%ZZ`, a lone `%`) or a path parameter longer than the
 * router's limit (100 characters, Fastify's `maxParamLength`; a long model name in
 * `/v1beta/models/{model}:generateContent` reaches it) is refused by the router before any
 * surface sees it, so the answer is Fastify's own `{error, code, message, statusCode}` body
 * (400 FST_ERR_BAD_URL, 414 FST_ERR_MAX_PARAM_LENGTH) instead of the surface's shape. Fastify's
 * `frameworkErrors` option (in app/gateway.ts) is where such errors can be rendered per surface.
 */
describe("malformed URLs [sqlite]", () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { logLevel: "warn" });
    token = (await gw.createUser({ quota: 1000 })).key;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const long = "x".repeat(120);
  it.each([
    ["GET", "/audioa/fetch/%ZZ"],
    ["GET", `/audioa/fetch/${long}`],
    ["POST", "/v1beta/models/%:generateContent"],
    ["POST", `/v1beta/models/${long}:generateContent`],
    ["GET", "/v1/images/files/%ZZ"],
    ["GET", "/api/admin/users/%ZZ"],
  ])("%s %s is answered in the surface's error shape", async (method, path) => {
    const headers = { authorization: `Bearer ${path.startsWith("/api/admin") ? gw.adminKey : token}` };
    const res = await callGateway(gw.url, method, path, { headers, body: method === "POST" ? {} : undefined });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(errorProblem(surfaceOf(path), res.status, res.body), res.text).toBeNull();
  });
});
