import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";

/** A request per surface that passes authentication and then fails harmlessly (404/400). */
function requestOn(surface: "tasks" | "images" | "content", url: string, key: string): Promise<Response> {
  if (surface === "tasks") {
    return fetch(`${url}/audioa/fetch/task_doesnotexist`, { headers: { authorization: `Bearer ${key}` } });
  }
  if (surface === "images") {
    return fetch(`${url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "no-such-model", prompt: "x" }),
    });
  }
  return fetch(`${url}/v1beta/models/no-such-model:generateContent`, {
    method: "POST",
    headers: { "x-goog-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x" }] }] }),
  });
}

const SHAPE = {
  tasks: (b: any) => b.code === "rate_limited" && b.data === null,
  images: (b: any) => b.error?.type === "rate_limit_error" && b.error?.code === "rate_limited",
  content: (b: any) => b.error?.code === 429 && b.error?.status === "RESOURCE_EXHAUSTED",
};

describe("request limits per token on one instance", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite", { limits: { requestsPerMinute: 3 } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const surface of ["tasks", "images", "content"] as const) {
    it(`answers the request over the limit with 429 and Retry-After in the ${surface} shape`, async () => {
      const { key } = await gw.createUser();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await requestOn(surface, gw.url, key)).status);
      expect(statuses.every((s) => s !== 429)).toBe(true);
      const limited = await requestOn(surface, gw.url, key);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(SHAPE[surface](await limited.json())).toBe(true);
      // Another token of another user is not affected.
      const other = await gw.createUser();
      expect((await requestOn(surface, gw.url, other.key)).status).not.toBe(429);
    });
  }
});

describe.skipIf(!HAS_PG || !HAS_REDIS)("request limits across two instances sharing Redis", () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    const shared = { redisUrl: REDIS_URL, redisKeyPrefix: uniqueRedisPrefix(), limits: { requestsPerMinute: 4 } };
    a = await startTestGateway("postgres", shared);
    b = await startTestGateway("postgres", shared, { databaseUrl: a.gateway.ctx.config.databaseUrl });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("counts one token's requests on both instances against one limit", async () => {
    const { key } = await a.createUser();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await requestOn("tasks", i % 2 === 0 ? a.url : b.url, key)).status);
    expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
  });
});

describe("unfinished tasks per user", () => {
  let gw: TestGateway;
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ keys: ["sim-key"], taskRelay: { completeAfterMs: 60_000 } });
    gw = await startTestGateway("sqlite", {
      limits: { tasksInFlightPerUser: 2 },
      tasks: { pollIntervalMs: 50, workerTickMs: 20 },
    });
    await gw.createChannel({ type: "task-relay", baseUrl: sim.url, key: "sim-key", models: ["audioa"] });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  const submit = (key: string) =>
    fetch(`${gw.url}/audioa/submit/MUSIC`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ gpt_description_prompt: "a long song" }),
    });

  it("refuses a submit over the limit with 429 in the envelope, charging nothing for it", async () => {
    const { key, userId } = await gw.createUser({ quota: 10_000_000 });
    expect((await submit(key)).status).toBe(200);
    expect((await submit(key)).status).toBe(200);
    const before = await gw.balance(userId);
    const third = await submit(key);
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("5");
    const body = (await third.json()) as { code: string; message: string; data: null };
    expect(body.code).toBe("rate_limited");
    expect(body.message).toMatch(/2 unfinished tasks/);
    expect(await gw.balance(userId)).toBe(before);
    // Another user is not affected.
    const other = await gw.createUser();
    expect((await submit(other.key)).status).toBe(200);
  });

  it("feeds the poller's lag and batch-size metrics", async () => {
    const { key } = await gw.createUser();
    expect((await submit(key)).status).toBe(200);
    let text = "";
    for (let i = 0; i < 100 && !/gateway_task_poll_batch_size_count\{platform="audioa"\} [1-9]/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = await (await fetch(`${gw.url}/metrics`)).text();
    }
    expect(text).toMatch(/gateway_task_poll_batch_size_count\{platform="audioa"\} [1-9]/);
    expect(text).toMatch(/gateway_task_poll_lag_seconds_count\{platform="audioa"\} [1-9]/);
  });
});
