import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { HAS_PG } from "../../support/postgres.js";
import { CONTENT_BODY, callGateway } from "../harness.js";
import { errorProblem, surfaceOf } from "../surface-shapes.js";

/**
 * PostgreSQL refuses the NUL character in a query parameter (`invalid byte sequence for encoding
 * "UTF8": 0x00`), and a NUL is valid JSON (`"\u0000"`) and a valid URL escape (`%00`). Every
 * surface refuses it where it enters (`http/input-bounds.ts`), so no store ever sees one; see
 * unstorable-text.test.ts for the field named in each answer.
 */
describe.skipIf(!HAS_PG)("NUL characters from clients [postgres]", () => {
  let gw: TestGateway;
  let sim: Simulator;
  let token: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 2 });
    gw = await startTestGateway("postgres", { logLevel: "warn" });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["gemini-2.5-flash", "image-model"] });
    token = (await gw.createUser({ quota: 50_000_000 })).key;
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it.each([
    ["GET", "/audioa/fetch/%00", undefined],
    ["POST", "/audioa/fetch", { ids: ["task_\u0000"] }],
    ["POST", "/audioa/submit/MUSIC", { prompt: "la\u0000la" }],
    ["POST", "/v1/images/generations", { model: "image-model", prompt: "a\u0000b" }],
    [
      "POST",
      "/v1beta/models/gemini-2.5-flash:generateContent",
      { ...CONTENT_BODY, contents: [{ parts: [{ text: "a\u0000" }] }] },
    ],
    ["GET", "/api/admin/tasks?task_id=%00", undefined],
  ])("%s %s is a 4xx in the surface's shape, not a 500", async (method, path, body) => {
    const auth = path.startsWith("/api/admin") ? gw.adminKey : token;
    const headers: Record<string, string> = path.startsWith("/v1beta")
      ? { "x-goog-api-key": auth }
      : { authorization: `Bearer ${auth}` };
    const res = await callGateway(gw.url, method, path, { headers, body });
    expect(res.status, res.text).toBeLessThan(500);
    if (res.status >= 400) expect(errorProblem(surfaceOf(path), res.status, res.body)).toBeNull();
  });
});
