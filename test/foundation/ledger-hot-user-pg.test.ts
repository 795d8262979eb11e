import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayError } from "../../src/core/errors.js";
import { openStore, type Store } from "../../src/store/database.js";
import { Ledger } from "../../src/store/ledger.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import type { Database } from "../../src/store/schema.js";
import { Tokens } from "../../src/store/tokens.js";
import { Users } from "../../src/store/users.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

// One hot user on PostgreSQL: the holds and settlements asked for at the same moment share a
// transaction and one statement per kind, and every one of them comes out as it would alone.

describe.skipIf(!HAS_PG)("one hot user on PostgreSQL", () => {
  let store: Store;
  let drop: () => Promise<void>;
  let url: string;
  /** Every statement the store ran, in order. */
  const statements: string[] = [];

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    url = database.url;
    // As the gateway's store: 64-bit integers come back as numbers.
    const types = {
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
    } as pg.CustomTypesConfig;
    const pool = new pg.Pool({ connectionString: database.url, max: 10, types });
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === "query") statements.push(event.query.sql);
      },
    });
    store = { db, dialect: "postgres", close: () => db.destroy(), ping: async () => true };
    await migrateToLatest(store);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  async function hotUser(quota: number, creditLine = 0, tokenLimit: number | null = null) {
    const user = await new Users(store.db).create({ name: `hot-${Math.random()}`, creditLine });
    const token = await new Tokens(store.db).create({ userId: user.id, name: "t", quotaLimit: tokenLimit });
    const ledger = Ledger.forStore(store);
    if (quota > 0) await ledger.topUp(user.id, quota, "start");
    return { ledger, userId: user.id, tokenId: token.row.id };
  }

  /** Runs `fn` and counts the transactions and statements it took. */
  async function counted<T>(fn: () => Promise<T>) {
    const from = statements.length;
    const value = await fn();
    const ran = statements.slice(from);
    return { value, transactions: ran.filter((s) => s === "begin").length, statements: ran.length };
  }

  async function books(ledger: Ledger, userId: number, tokenId: number) {
    const user = await store.db
      .selectFrom("users")
      .select(["quota", "used_quota"])
      .where("id", "=", userId)
      .executeTakeFirstOrThrow();
    const token = await store.db
      .selectFrom("tokens")
      .select("used_quota")
      .where("id", "=", tokenId)
      .executeTakeFirstOrThrow();
    const open = await store.db
      .selectFrom("charges")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("user_id", "=", userId)
      .where("state", "=", "open")
      .executeTakeFirstOrThrow();
    return {
      balance: Number(user.quota),
      usedQuota: Number(user.used_quota),
      tokenUsed: Number(token.used_quota),
      ledgerSum: await ledger.ledgerSum(userId),
      open: Number(open.n),
    };
  }

  const holds = (ledger: Ledger, userId: number, tokenId: number, n: number, amount: number, tag: string) =>
    Promise.allSettled(
      Array.from({ length: n }, (_, i) => ledger.charge({ userId, tokenId, amount, reference: `content:${tag}-${i}` })),
    );

  it("takes 200 concurrent holds of one user in a few transactions and ends with exact balances", async () => {
    const { ledger, userId, tokenId } = await hotUser(100_000);
    const { value, transactions, statements: ran } = await counted(() => holds(ledger, userId, tokenId, 200, 70, "a"));
    expect(value.every((r) => r.status === "fulfilled")).toBe(true);
    expect(transactions).toBeLessThanOrEqual(3);
    expect(ran).toBeLessThanOrEqual(30);
    expect(await books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - 200 * 70,
      usedQuota: 200 * 70,
      tokenUsed: 200 * 70,
      ledgerSum: 100_000 - 200 * 70,
      open: 200,
    });
  });

  it("settles and refunds 200 concurrent charges of one user in a few transactions", async () => {
    const { ledger, userId, tokenId } = await hotUser(100_000);
    await holds(ledger, userId, tokenId, 200, 100, "b");
    // A third settles within its hold, a third above it, a third is refunded.
    const { value, transactions } = await counted(() =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 3 === 0
            ? ledger.settle(`content:b-${i}`, 40)
            : i % 3 === 1
              ? ledger.settle(`content:b-${i}`, 130)
              : ledger.refund(`content:b-${i}`),
        ),
      ),
    );
    expect(transactions).toBeLessThanOrEqual(3);
    expect(value.every((o) => o.applied && o.uncollected === 0)).toBe(true);
    const spent = 67 * 40 + 67 * 130;
    expect(await books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - spent,
      usedQuota: spent,
      tokenUsed: spent,
      ledgerSum: 100_000 - spent,
      open: 0,
    });
  });

  it("refuses exactly the holds that would not fit one after another when together they exceed the balance", async () => {
    const { ledger, userId, tokenId } = await hotUser(10_000, 500);
    const { value, transactions, statements: ran } = await counted(() => holds(ledger, userId, tokenId, 200, 60, "c"));
    // 10,000 plus a credit line of 500 leaves room for 175 holds of 60, the first 175 asked.
    const refused = value.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
    expect(refused).toEqual(Array.from({ length: 25 }, (_, i) => 175 + i));
    for (const r of value) {
      if (r.status === "rejected") expect((r.reason as GatewayError).errorName).toBe("GW_ERR_INSUFFICIENT_QUOTA");
    }
    expect(transactions).toBeLessThanOrEqual(3);
    // Decided one after another in memory from the rows read under lock, not one statement each.
    expect(ran).toBeLessThanOrEqual(40);
    expect(await books(ledger, userId, tokenId)).toEqual({
      balance: 10_000 - 175 * 60,
      usedQuota: 175 * 60,
      tokenUsed: 175 * 60,
      ledgerSum: 10_000 - 175 * 60,
      open: 175,
    });
  });

  it("keeps a token's limit exact when one user's concurrent holds together pass it", async () => {
    const { ledger, userId, tokenId } = await hotUser(100_000, 0, 1_000);
    const value = await holds(ledger, userId, tokenId, 30, 70, "d");
    expect(value.filter((r) => r.status === "fulfilled")).toHaveLength(14);
    const rejected = value.filter((r) => r.status === "rejected");
    expect(rejected.every((r) => (r.reason as GatewayError).errorName === "GW_ERR_TOKEN_QUOTA_EXCEEDED")).toBe(true);
    expect(await books(ledger, userId, tokenId)).toMatchObject({ tokenUsed: 980, ledgerSum: 100_000 - 980, open: 14 });
  });
  it("prepares each batch statement once per connection, by name, whatever the batch's size", async () => {
    // One connection, so that every batch runs where the statements were prepared.
    const own = openStore(url, { poolSize: 1 });
    try {
      const { userId, tokenId } = await hotUser(100_000);
      const ledger = Ledger.forStore(own);
      const prepared = async () =>
        (
          await sql<{ name: string; calls: number }>`
            select name, generic_plans + custom_plans as calls from pg_prepared_statements order by name`.execute(
            own.db,
          )
        ).rows.map((r) => ({ name: r.name, calls: Number(r.calls) }));
      for (const [n, tag] of [
        [2, "p1"],
        [7, "p2"],
        [30, "p3"],
      ] as const) {
        await holds(ledger, userId, tokenId, n, 10, tag);
        await Promise.all(Array.from({ length: n }, (_, i) => ledger.settle(`content:${tag}-${i}`, 4)));
      }
      // Three batches of holds (one write each) and three of settlements (a close and a write each).
      const after = await prepared();
      expect(after).toHaveLength(2);
      for (const p of after) expect(p.name).toMatch(/^mg_fixed_\d+$/);
      expect(after.reduce((sum, p) => sum + p.calls, 0)).toBe(9);
      expect(await books(ledger, userId, tokenId)).toMatchObject({
        usedQuota: 39 * 4,
        ledgerSum: 100_000 - 39 * 4,
        open: 0,
      });
    } finally {
      await own.close();
    }
  });

  it("stays exact with two instances batching the same users at once", async () => {
    const second = openStore(url, { poolSize: 4 });
    try {
      const accounts = [await hotUser(50_000), await hotUser(50_000), await hotUser(50_000)];
      const other = Ledger.forStore(second);
      const work = (ledger: Ledger, tag: string) =>
        Promise.all(
          Array.from({ length: 120 }, async (_, i) => {
            const { userId, tokenId } = accounts[i % 3] as (typeof accounts)[number];
            const reference = `content:${tag}-${i}`;
            await ledger.charge({ userId, tokenId, amount: 50, reference });
            await ledger.settle(reference, i % 2 === 0 ? 20 : 70);
          }),
        );
      await Promise.all([work(accounts[0]?.ledger as Ledger, "e1"), work(other, "e2")]);
      for (const { ledger, userId, tokenId } of accounts) {
        // Per user: 80 calls, half settled to 20 and half to 70.
        expect(await books(ledger, userId, tokenId)).toEqual({
          balance: 50_000 - 40 * 20 - 40 * 70,
          usedQuota: 40 * 20 + 40 * 70,
          tokenUsed: 40 * 20 + 40 * 70,
          ledgerSum: 50_000 - 40 * 20 - 40 * 70,
          open: 0,
        });
      }
    } finally {
      await second.close();
    }
  });
});
