import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";

describe.skipIf(!HAS_PG || !HAS_REDIS)("two instances on one PostgreSQL and one Redis", () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    const shared = { redisUrl: REDIS_URL, redisKeyPrefix: uniqueRedisPrefix(), limits: { requestsPerMinute: 6 } };
    a = await startTestGateway("postgres", shared);
    b = await startTestGateway("postgres", shared, { databaseUrl: a.gateway.ctx.config.databaseUrl });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("refuses on the other instance, within a second, a token revoked on one", async () => {
    const { key, tokenId } = await a.createUser();
    // Both instances have the token cached.
    await a.gateway.ctx.auth.authenticate(key, "127.0.0.1");
    await b.gateway.ctx.auth.authenticate(key, "127.0.0.1");
    await a.admin("DELETE", `/tokens/${tokenId}`);
    const deadline = Date.now() + 1000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = await b.gateway.ctx.auth.authenticate(key, "127.0.0.1").then(
        () => false,
        (err) => err.code === "token_disabled",
      );
      if (!refused) await new Promise((r) => setTimeout(r, 20));
    }
    expect(refused).toBe(true);
  });

  it("holds one token's request limit across both instances", async () => {
    const { tokenId } = await a.createUser();
    const results: string[] = [];
    for (let i = 0; i < 8; i++) {
      const gw = i % 2 === 0 ? a : b;
      results.push(
        await gw.gateway.ctx.limits.consumeRequest(tokenId).then(
          () => "ok",
          (err) => `${err.status}:${err.headers["retry-after"] ? "retry-after" : "none"}`,
        ),
      );
    }
    expect(results).toEqual(["ok", "ok", "ok", "ok", "ok", "ok", "429:retry-after", "429:retry-after"]);
  });
});
