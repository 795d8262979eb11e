import { describe, expect, it } from "vitest";
import type { GatewayError } from "../../src/core/errors.js";
import { openStore } from "../../src/store/database.js";
import { Ledger } from "../../src/store/ledger.js";
import { useHotUserStore } from "../support/hot-user-pg.js";
import { HAS_PG } from "../support/postgres.js";

// One hot user on PostgreSQL: the holds and settlements asked for at the same moment share a
// transaction and one statement per kind, and every one of them comes out as it would alone.

// Each test runs twice: with the bare runs going through the query builder, and as the gateway's
// store runs them, on a connection that pipelines (src/store/postgres/pipelined-batch.ts; its own
// round trips are tested in ledger-pipelined-pg.test.ts).
describe.skipIf(!HAS_PG).each([
  { runs: "through the query builder", pipelined: false },
  { runs: "on a pipelined connection", pipelined: true },
])("one hot user on PostgreSQL, bare runs $runs", ({ pipelined }) => {
  const h = useHotUserStore(pipelined);

  it("takes 200 concurrent holds of one user in a few transactions and ends with exact balances", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(100_000);
    const {
      value,
      transactions,
      statements: ran,
    } = await h.counted(() => h.holds(ledger, userId, tokenId, 200, 70, "a"));
    expect(value.every((r) => r.status === "fulfilled")).toBe(true);
    expect(transactions).toBeLessThanOrEqual(3);
    expect(ran).toBeLessThanOrEqual(30);
    expect(await h.books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - 200 * 70,
      usedQuota: 200 * 70,
      tokenUsed: 200 * 70,
      ledgerSum: 100_000 - 200 * 70,
      open: 200,
    });
  });

  it("settles and refunds 200 concurrent charges of one user in a few transactions", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(100_000);
    await h.holds(ledger, userId, tokenId, 200, 100, "b");
    // A third settles within its hold, a third above it, a third is refunded.
    const { value, transactions } = await h.counted(() =>
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
    expect(await h.books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - spent,
      usedQuota: spent,
      tokenUsed: spent,
      ledgerSum: 100_000 - spent,
      open: 0,
    });
  });

  it("refuses exactly the holds that would not fit one after another when together they exceed the balance", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(10_000, 500);
    const {
      value,
      transactions,
      statements: ran,
    } = await h.counted(() => h.holds(ledger, userId, tokenId, 200, 60, "c"));
    // 10,000 plus a credit line of 500 leaves room for 175 holds of 60, the first 175 asked.
    const refused = value.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
    expect(refused).toEqual(Array.from({ length: 25 }, (_, i) => 175 + i));
    for (const r of value) {
      if (r.status === "rejected") expect((r.reason as GatewayError).errorName).toBe("GW_ERR_INSUFFICIENT_QUOTA");
    }
    expect(transactions).toBeLessThanOrEqual(3);
    // Decided one after another in memory from the rows read under lock, not one statement each.
    expect(ran).toBeLessThanOrEqual(40);
    expect(await h.books(ledger, userId, tokenId)).toEqual({
      balance: 10_000 - 175 * 60,
      usedQuota: 175 * 60,
      tokenUsed: 175 * 60,
      ledgerSum: 10_000 - 175 * 60,
      open: 175,
    });
  });

  it("keeps a token's limit exact when one user's concurrent holds together pass it", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(100_000, 0, 1_000);
    const value = await h.holds(ledger, userId, tokenId, 30, 70, "d");
    expect(value.filter((r) => r.status === "fulfilled")).toHaveLength(14);
    const rejected = value.filter((r) => r.status === "rejected");
    expect(rejected.every((r) => (r.reason as GatewayError).errorName === "GW_ERR_TOKEN_QUOTA_EXCEEDED")).toBe(true);
    expect(await h.books(ledger, userId, tokenId)).toMatchObject({
      tokenUsed: 980,
      ledgerSum: 100_000 - 980,
      open: 14,
    });
  });
  it("stays exact with two instances batching the same users at once", async () => {
    const second = openStore(h.url, { poolSize: 4 });
    try {
      const accounts = [await h.hotUser(50_000), await h.hotUser(50_000), await h.hotUser(50_000)];
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
        expect(await h.books(ledger, userId, tokenId)).toEqual({
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
