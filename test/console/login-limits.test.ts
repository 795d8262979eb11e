import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { LoginLimits } from "../../src/console/server/login-limits.js";
import { GatewayError } from "../../src/core/errors.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => (err instanceof GatewayError ? err : Promise.reject(err)),
  );

describe.skipIf(!HAS_REDIS)("sign-in slowing shared through Redis", () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  it("counts the failures of every instance together, per account and per address", async () => {
    const prefix = uniqueRedisPrefix();
    const instance = () => {
      const client = new Redis(REDIS_URL);
      clients.push(client);
      return new LoginLimits({ perAccount: 2, perAddress: 3, keyPrefix: prefix }, client);
    };
    const [a, b] = [instance(), instance()];
    await a.recordFailure("shared", "10.0.0.1");
    expect(await refusal(b.assertAllowed("shared", "10.0.0.2"))).toBeNull();
    await b.recordFailure("SHARED", "10.0.0.2");
    const byAccount = await refusal(a.assertAllowed("shared", "10.0.0.3"));
    expect(byAccount?.status).toBe(429);
    expect(Number(byAccount?.headers["retry-after"])).toBeGreaterThan(0);

    await a.clearAccount("shared");
    expect(await refusal(b.assertAllowed("shared", "10.0.0.3"))).toBeNull();

    for (const name of ["x", "y", "z"]) await (name === "y" ? b : a).recordFailure(name, "10.0.0.9");
    expect((await refusal(b.assertAllowed("someone-else", "10.0.0.9")))?.status).toBe(429);
  });
});
