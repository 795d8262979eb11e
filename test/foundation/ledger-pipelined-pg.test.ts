import { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/database.js";
import { Ledger } from "../../src/store/ledger.js";
import { CLOSE_ALL } from "../../src/store/postgres/batch-statements.js";
import { WRITE_TOGETHER } from "../../src/store/postgres/together-statement.js";
import { useHotUserStore } from "../support/hot-user-pg.js";
import { HAS_PG } from "../support/postgres.js";

// The ledger's bare runs on PostgreSQL's pipelined connection (src/store/postgres/pipelined-batch.ts):
// what each batch sends, in what order, and that its outcomes stay exact when it cannot go through.

describe.skipIf(!HAS_PG)("the ledger's pipelined batches on PostgreSQL", () => {
  const h = useHotUserStore(true);

  it("closes charges it opened itself with one statement, its own transaction", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(100_000);
    const from = h.wire.length;
    const value = await h.holds(ledger, userId, tokenId, 20, 50, "f");
    expect(value.every((r) => r.status === "fulfilled")).toBe(true);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 4 === 0 ? ledger.refund(`content:f-${i}`) : ledger.settle(`content:f-${i}`, i % 2 === 0 ? 30 : 80),
      ),
    );
    expect(outcomes.every((o) => o.applied)).toBe(true);
    // The holds in one statement, the closes in one: no begin, no commit.
    expect(h.wire.slice(from)).toEqual([
      `sent ${WRITE_TOGETHER.text}`,
      `answered ${WRITE_TOGETHER.text}`,
      `sent ${WRITE_TOGETHER.text}`,
      `answered ${WRITE_TOGETHER.text}`,
    ]);
    const spent = 5 * 30 + 10 * 80; // five settled within the hold at 30, ten above it at 80
    expect(await h.books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - spent,
      usedQuota: spent,
      tokenUsed: spent,
      ledgerSum: 100_000 - spent,
      open: 0,
    });
  });

  it("closes charges opened elsewhere in two round trips: begin with the close, the writes with the commit", async () => {
    const { ledger: opener, userId, tokenId } = await h.hotUser(100_000);
    await h.holds(opener, userId, tokenId, 20, 50, "g");
    const closer = Ledger.forStore(h.store);
    const from = h.wire.length;
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => closer.settle(`content:g-${i}`, 30)));
    expect(outcomes.every((o) => o.applied)).toBe(true);
    // Each pair is sent before the answer to its first: the close does not wait for the begin,
    // nor the commit for the writes.
    expect(h.wire.slice(from)).toEqual([
      "sent begin",
      `sent ${CLOSE_ALL.text}`,
      "answered begin",
      `answered ${CLOSE_ALL.text}`,
      `sent ${WRITE_TOGETHER.text}`,
      "sent commit",
      `answered ${WRITE_TOGETHER.text}`,
      "answered commit",
    ]);
    expect(await h.books(closer, userId, tokenId)).toMatchObject({
      usedQuota: 20 * 30,
      ledgerSum: 100_000 - 20 * 30,
      open: 0,
    });
  });

  it("closes nothing twice when a charge it opened was closed elsewhere meanwhile", async () => {
    const { ledger, userId, tokenId } = await h.hotUser(100_000);
    await h.holds(ledger, userId, tokenId, 10, 50, "h");
    // Another instance (a reaper, say) refunds two of them first.
    const other = Ledger.forStore(h.store);
    await Promise.all([other.refund("content:h-3"), other.refund("content:h-7")]);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.settle(`content:h-${i}`, 30)));
    expect(outcomes.map((o) => o.applied)).toEqual(Array.from({ length: 10 }, (_, i) => i !== 3 && i !== 7));
    expect(await h.books(ledger, userId, tokenId)).toEqual({
      balance: 100_000 - 8 * 30,
      usedQuota: 8 * 30,
      tokenUsed: 8 * 30,
      ledgerSum: 100_000 - 8 * 30,
      open: 0,
    });
  });

  it("prepares each batch statement once per connection, by name, whatever the batch's size", async () => {
    // The batches run on the store's one pipelined connection, where the statements are prepared.
    const own = openStore(h.url, { poolSize: 1 });
    try {
      const { userId, tokenId } = await h.hotUser(100_000);
      const ledger = Ledger.forStore(own);
      const pipelined = own.ledgerPool;
      if (!pipelined) throw new Error("a PostgreSQL store has a pipelined ledger connection");
      const prepared = async () =>
        (
          await pipelined.query<{ name: string; calls: string }>(
            "select name, generic_plans + custom_plans as calls from pg_prepared_statements order by name",
          )
        ).rows.map((r) => ({ name: r.name, calls: Number(r.calls) }));
      for (const [n, tag] of [
        [2, "p1"],
        [7, "p2"],
        [30, "p3"],
      ] as const) {
        await h.holds(ledger, userId, tokenId, n, 10, tag);
        await Promise.all(Array.from({ length: n }, (_, i) => ledger.settle(`content:${tag}-${i}`, 4)));
      }
      // Three batches of holds and three of settlements of charges opened here: one statement each.
      const after = await prepared();
      expect(after).toHaveLength(1);
      for (const p of after) expect(p.name).toMatch(/^mg_fixed_\d+$/);
      expect(after.reduce((sum, p) => sum + p.calls, 0)).toBe(6);
      expect(await h.books(ledger, userId, tokenId)).toMatchObject({
        usedQuota: 39 * 4,
        ledgerSum: 100_000 - 39 * 4,
        open: 0,
      });
    } finally {
      await own.close();
    }
  });

  it("keeps the books exact when its connection is lost between two batches", async () => {
    const own = openStore(h.url, { poolSize: 2 });
    try {
      const { userId, tokenId } = await h.hotUser(100_000);
      const ledger = Ledger.forStore(own);
      const pipelined = own.ledgerPool;
      if (!pipelined) throw new Error("a PostgreSQL store has a pipelined ledger connection");
      await h.holds(ledger, userId, tokenId, 10, 50, "q");
      const before = (await pipelined.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid;
      await h.store.db.executeQuery(CompiledQuery.raw("select pg_terminate_backend($1)", [before]));
      // The pool drops the idle connection once it hears of its end.
      for (let i = 0; i < 200 && pipelined.totalCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(pipelined.totalCount).toBe(0);
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.settle(`content:q-${i}`, 20)));
      expect(outcomes.every((o) => o.applied)).toBe(true);
      expect(await h.books(ledger, userId, tokenId)).toEqual({
        balance: 100_000 - 10 * 20,
        usedQuota: 10 * 20,
        tokenUsed: 10 * 20,
        ledgerSum: 100_000 - 10 * 20,
        open: 0,
      });
      // The next batches run on a new connection.
      const after = (await pipelined.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid;
      expect(after).not.toBe(before);
    } finally {
      await own.close();
    }
  });
});
