import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";
import { HAS_REDIS, REDIS_URL, uniqueRedisPrefix } from "../support/redis.js";
import { generateCodes, redeem } from "./harness.js";

/** Two gateways on one PostgreSQL store: the store decides which redeem of a code credits. */
describe.skipIf(!HAS_PG)("redemption codes across two instances on one PostgreSQL store", () => {
  let db: { url: string; drop(): Promise<void> };
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startTestGateway("postgres", { instanceName: "redeem-a" }, { databaseUrl: db.url, keepStore: true });
    b = await startTestGateway("postgres", { instanceName: "redeem-b" }, { databaseUrl: db.url, keepStore: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await a?.dropStore();
    await b?.dropStore();
    await db?.drop();
  });

  it("credits each code once when many users redeem it at once on both instances", async () => {
    const users = await Promise.all(Array.from({ length: 12 }, () => a.createUser({ quota: 0 })));
    const { codes } = await generateCodes(a, { count: 3, quota: 1_000 });
    const attempts = codes.flatMap((code) =>
      users.map((user, i) => redeem(i % 2 === 0 ? a : b, user.key, code).then((answer) => ({ code, answer }))),
    );
    const answers = await Promise.all(attempts);
    for (const code of codes) {
      const mine = answers.filter((x) => x.code === code);
      expect(mine.filter((x) => x.answer.status === 200)).toHaveLength(1);
      expect(mine.filter((x) => x.answer.status === 409).map((x) => x.answer.body.error.code)).toEqual(
        Array(users.length - 1).fill("redemption_code_used"),
      );
    }
    const balances = await Promise.all(users.map((u) => a.balance(u.userId)));
    expect(balances.reduce((x, y) => x + y, 0)).toBe(3_000);
    const rows = await a.gateway.ctx.store.db
      .selectFrom("ledger")
      .select("reference")
      .where("reference", "like", "redemption:%")
      .execute();
    expect(rows).toHaveLength(3);
    for (const user of users)
      expect(await a.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(await a.balance(user.userId));
  });

  it("holds the limit per user when one user redeems several codes of a batch at once on both instances", async () => {
    const user = await a.createUser({ quota: 0 });
    const { codes } = await generateCodes(a, { count: 6, quota: 10, per_user_limit: 2 });
    const answers = await Promise.all(codes.map((code, i) => redeem(i % 2 === 0 ? a : b, user.key, code)));
    expect(answers.filter((x) => x.status === 200)).toHaveLength(2);
    expect(answers.filter((x) => x.status === 409).map((x) => x.body.error.code)).toEqual(
      Array(4).fill("redemption_limit_reached"),
    );
    expect(await a.balance(user.userId)).toBe(20);
  });
});

/** Two gateways sharing PostgreSQL and Redis: a user's failed redemptions count on every instance. */
describe.skipIf(!HAS_PG || !HAS_REDIS)("redemption guessing limit across two instances sharing Redis", () => {
  let db: { url: string; drop(): Promise<void> };
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    const shared = { redisUrl: REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() };
    a = await startTestGateway(
      "postgres",
      { ...shared, instanceName: "guess-a" },
      { databaseUrl: db.url, keepStore: true },
    );
    b = await startTestGateway(
      "postgres",
      { ...shared, instanceName: "guess-b" },
      { databaseUrl: db.url, keepStore: true },
    );
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await a?.dropStore();
    await b?.dropStore();
    await db?.drop();
  });

  it("refuses the eleventh failure's next attempt on either instance", async () => {
    const user = await a.createUser({ quota: 0 });
    const { codes } = await generateCodes(a, { count: 1, quota: 5 });
    for (let i = 0; i < 10; i++) {
      expect((await redeem(i % 2 === 0 ? a : b, user.key, `GUESS${i}`)).status).toBe(404);
    }
    expect((await redeem(a, user.key, codes[0] as string)).status).toBe(429);
    expect((await redeem(b, user.key, codes[0] as string)).status).toBe(429);
    expect(await a.balance(user.userId)).toBe(0);
  });
});
