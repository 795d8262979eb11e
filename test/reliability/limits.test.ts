import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";
import { bearer, CONTENT_BODY, callGateway, googleKey } from "./harness.js";
import { errorProblem, surfaceOf } from "./surface-shapes.js";

/**
 * Limits that protect the gateway from abusive clients: body size and token guessing. The store
 * plays no part in them, so they run on SQLite; the guessing limit is shown in memory (one
 * instance) and through Redis (shared by instances).
 */
describe("limits", () => {
  let gw: TestGateway;
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3 });
    gw = await startTestGateway("sqlite", {
      logLevel: "warn",
      bodyLimitBytes: 2048,
      bodies: {
        content: { maxBytes: 2048, maxDepth: 8 },
        chat: { maxBytes: 2048, maxDepth: 8 },
        images: { maxBytes: 2048, maxDepth: 8 },
        tasks: { maxBytes: 2048, maxDepth: 8 },
        admin: { maxBytes: 2048, maxDepth: 8 },
      },
      limits: { authFailuresPerMinute: 5 },
    });
    await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["gemini-2.5-flash", "image-model"] });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it("a body over the limit is a 413 in each surface's own shape, and nothing is charged", async () => {
    const user = await gw.createUser({ quota: 1_000_000 });
    const big = "x".repeat(4096);
    const cases: Array<[string, Record<string, string>, unknown]> = [
      ["/audioa/submit/MUSIC", bearer(user.key), { prompt: big }],
      ["/audioa/fetch", bearer(user.key), { ids: [big] }],
      ["/v1/images/generations", bearer(user.key), { model: "image-model", prompt: big }],
      [
        "/v1beta/models/gemini-2.5-flash:generateContent",
        googleKey(user.key),
        { contents: [{ parts: [{ text: big }] }] },
      ],
      [
        "/v1/chat/completions",
        bearer(user.key),
        { model: "gemini-2.5-flash", messages: [{ role: "user", content: big }] },
      ],
      [
        "/v1/messages",
        { "x-api-key": user.key },
        { model: "gemini-2.5-flash", max_tokens: 16, messages: [{ role: "user", content: big }] },
      ],
      ["/api/admin/users", { authorization: `Bearer ${gw.adminKey}` }, { name: big }],
    ];
    for (const [path, headers, body] of cases) {
      const res = await callGateway(gw.url, "POST", path, { headers, body });
      expect(res.status, `${path}: ${res.text}`).toBe(413);
      expect(errorProblem(surfaceOf(path), 413, res.body), path).toBeNull();
      expect(res.text, path).toContain("2048 bytes");
    }
    expect(await gw.balance(user.userId)).toBe(1_000_000);
  });

  it("a body nested past the surface's depth is a 400 naming the limit, before any work, in each surface's shape", async () => {
    const user = await gw.createUser({ quota: 1_000_000 });
    const nest = (depth: number): unknown => {
      let v: unknown = "x";
      for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
      return v;
    };
    const cases: Array<[string, Record<string, string>, (deep: unknown) => unknown]> = [
      ["/audioa/submit/MUSIC", bearer(user.key), (deep) => ({ prompt: "a", extra: deep })],
      ["/audioa/fetch", bearer(user.key), (deep) => ({ ids: deep })],
      ["/v1/images/generations", bearer(user.key), (deep) => ({ model: "image-model", prompt: "p", image: deep })],
      [
        "/v1beta/models/gemini-2.5-flash:generateContent",
        googleKey(user.key),
        (deep) => ({ contents: [{ parts: [{ text: "hi" }] }], tools: [{ functionDeclarations: [deep] }] }),
      ],
      [
        "/v1/chat/completions",
        bearer(user.key),
        (deep) => ({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "hi" }], tools: [deep] }),
      ],
      [
        "/v1/messages",
        { "x-api-key": user.key },
        (deep) => ({
          model: "gemini-2.5-flash",
          max_tokens: 16,
          messages: [{ role: "user", content: "hi" }],
          tools: [deep],
        }),
      ],
      ["/api/admin/users", { authorization: `Bearer ${gw.adminKey}` }, (deep) => ({ name: "n", extra: deep })],
    ];
    for (const [path, headers, make] of cases) {
      // 8 levels: the limit; the wrapper adds 1 to 4 more.
      const res = await callGateway(gw.url, "POST", path, { headers, body: make(nest(8)) });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(errorProblem(surfaceOf(path), 400, res.body), path).toBeNull();
      expect(res.text, path).toContain("more than 8 levels deep");
      // Deep far past the limit (a recursive parser or serialiser would overflow): the same 400.
      const huge = `{"contents":[{"parts":[{"text":"hi"}]}],"tools":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
      const res2 = await callGateway(gw.url, "POST", path, {
        headers: { ...headers, "content-type": "application/json" },
        body: huge,
      });
      expect([400, 413], path).toContain(res2.status);
    }
    expect(await gw.balance(user.userId)).toBe(1_000_000);
  });

  it("after limits.authFailuresPerMinute bad tokens from one address, every bad key gets 429 with Retry-After, and valid credentials still pass", async () => {
    // Behind one address there may be many clients (a NAT, a proxy not trusted): a valid token or
    // the admin key is never slowed down by what the others do.
    const user = await gw.createUser({ quota: 1_000_000 });
    for (let i = 0; i < 5; i++) {
      const res = await callGateway(gw.url, "POST", "/audioa/fetch", {
        headers: bearer(`sk-guess-${i}`),
        body: { ids: ["task_x"] },
      });
      expect(res.status).toBe(401);
    }
    const refused: Array<[string, Record<string, string>, unknown]> = [
      ["/audioa/fetch", bearer("sk-guess-next"), { ids: ["task_x"] }],
      ["/v1/images/generations", bearer("sk-guess-next"), { model: "image-model", prompt: "x" }],
      ["/v1beta/models/gemini-2.5-flash:generateContent", googleKey("guess-next"), CONTENT_BODY],
      ["/api/admin/users", { "x-admin-key": "guess-admin-key-0000" }, { name: "n" }],
    ];
    for (const [path, headers, body] of refused) {
      const res = await callGateway(gw.url, "POST", path, { headers, body });
      expect(res.status, path).toBe(429);
      expect(Number(res.headers["retry-after"]), path).toBeGreaterThanOrEqual(1);
      expect(errorProblem(surfaceOf(path), 429, res.body), path).toBeNull();
    }
    const passing: Array<[string, Record<string, string>, unknown]> = [
      ["/audioa/fetch", bearer(user.key), { ids: ["task_x"] }],
      ["/v1beta/models/gemini-2.5-flash:generateContent", googleKey(user.key), CONTENT_BODY],
      ["/api/admin/users", { "x-admin-key": gw.adminKey }, { name: "passing" }],
    ];
    for (const [path, headers, body] of passing) {
      const res = await callGateway(gw.url, "POST", path, { headers, body });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });
});

describe.skipIf(!HAS_REDIS)("token guessing across instances sharing Redis", () => {
  let one: TestGateway;
  let two: TestGateway;
  beforeAll(async () => {
    const shared = {
      logLevel: "warn" as const,
      redisUrl: REDIS_URL,
      redisKeyPrefix: uniqueRedisPrefix(),
      limits: { authFailuresPerMinute: 4 },
    };
    one = await startTestGateway("sqlite", shared);
    two = await startTestGateway("sqlite", shared);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it("failures counted on one instance slow the same address down on the other", async () => {
    for (let i = 0; i < 4; i++) {
      const gw = i % 2 === 0 ? one : two;
      const res = await callGateway(gw.url, "POST", "/audiob/fetch", {
        headers: bearer(`sk-guess-${i}`),
        body: { ids: ["task_x"] },
      });
      expect(res.status).toBe(401);
    }
    for (const gw of [one, two]) {
      const res = await callGateway(gw.url, "POST", "/audiob/fetch", {
        headers: bearer("sk-guess-next"),
        body: { ids: ["task_x"] },
      });
      expect(res.status).toBe(429);
      expect(errorProblem("envelope", 429, res.body)).toBeNull();
    }
  });
});
