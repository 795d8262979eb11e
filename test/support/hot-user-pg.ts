import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import type { Store } from "../../src/store/database.js";
import { Ledger } from "../../src/store/ledger.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { PreparingClient } from "../../src/store/postgres/fixed-statement.js";
import type { Database } from "../../src/store/schema.js";
import { Tokens } from "../../src/store/tokens.js";
import { Users } from "../../src/store/users.js";
import { createTestDatabase } from "./postgres.js";

/**
 * A PostgreSQL store of its own for the ledger's hot-user tests, made as the gateway makes its
 * store, with every statement it runs recorded. `pipelined`: the ledger's bare runs go through a
 * connection that pipelines (as the gateway's store does), whose statements are also recorded as
 * sent and answered; otherwise they go through the query builder.
 */
export async function openHotUserStore(pipelined: boolean) {
  /** Every statement the store ran, in order, on either connection. */
  const statements: string[] = [];
  /** The pipelined connection's statements: each one's sending and answer, in order. */
  const wire: string[] = [];
  const database = await createTestDatabase();
  // As the gateway's store: 64-bit integers come back as numbers.
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
  } as pg.CustomTypesConfig;
  const pool = new pg.Pool({ connectionString: database.url, max: 10, types });
  // As the gateway's store: a connection ended by the server (the database is dropped with its
  // connections at the end) must not become an unhandled error.
  pool.on("error", () => {});
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query") statements.push(event.query.sql);
    },
  });
  let ledgerPool: pg.Pool | undefined;
  if (pipelined) {
    ledgerPool = new pg.Pool({
      connectionString: database.url,
      max: 1,
      types,
      pipeline: true,
      Client: PreparingClient,
    });
    ledgerPool.on("error", () => {});
    ledgerPool.on("connect", (client) => {
      const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
      Object.assign(client, {
        query: (text: string, values?: unknown[]) => {
          statements.push(text);
          wire.push(`sent ${text}`);
          return query(text, values).finally(() => wire.push(`answered ${text}`));
        },
      });
    });
  }
  const close = async () => {
    await db.destroy();
    await ledgerPool?.end();
  };
  const store: Store = {
    db,
    dialect: "postgres",
    ...(ledgerPool ? { ledgerPool } : {}),
    close,
    ping: async () => true,
  };
  await migrateToLatest(store);

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

  return {
    store,
    url: database.url,
    statements,
    wire,
    hotUser,
    counted,
    books,
    holds,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
}

export type HotUserStore = Awaited<ReturnType<typeof openHotUserStore>>;

/**
 * The store of openHotUserStore for the tests of the enclosing `describe`: opened before them,
 * closed (and its database dropped) after them. Its members are there once the tests run.
 */
export function useHotUserStore(pipelined: boolean): HotUserStore {
  const store = {} as HotUserStore;
  let opened: HotUserStore | undefined;
  beforeAll(async () => {
    opened = await openHotUserStore(pipelined);
    Object.assign(store, opened);
  }, 60_000);
  afterAll(async () => {
    await opened?.close();
  });
  return store;
}
