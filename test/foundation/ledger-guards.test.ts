import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenAllows, userAllows } from "../../src/core/ledger/charge-rules.js";
import { openStore, type Store } from "../../src/store/database.js";
import {
  boundGuard,
  orNothingTaken,
  type TakeGuard,
  tokenTakeFits,
  userTakeFits,
} from "../../src/store/ledger-guards.js";
import { HAS_PG, PG_URL } from "../support/postgres.js";

// The SQL guards of both ledger engines are rendered from one source (src/store/ledger-guards.ts).
// Evaluated by SQLite and by PostgreSQL, as a bound value (the in-transaction form) and as text
// (the forms the prepared and fixed statements render), each says what the hold rule of
// core/ledger/charge-rules.ts says, for balances in debt, tokens past their limit and takes of zero.

const amount = fc.integer({ min: 0, max: 1_000 });
/** A take at the edge of the room (`room` + -2..2, not below 0) half of the time, else any amount. */
const takeNear = (room: number | null) =>
  fc.oneof(
    amount,
    fc.integer({ min: -2, max: 2 }).map((d) => Math.max(0, (room ?? 0) + d)),
  );
const userRow = fc.record({
  quota: fc.integer({ min: -1_000, max: 1_000 }),
  creditLine: fc.integer({ min: 0, max: 500 }),
});
const tokenRow = fc.record({
  limit: fc.option(fc.integer({ min: 0, max: 1_000 }), { nil: null }),
  used: fc.integer({ min: 0, max: 1_500 }),
});

describe("the ledger's SQL guards", () => {
  const stores: { name: string; store: Store }[] = [];

  beforeAll(() => {
    stores.push({ name: "sqlite", store: openStore("sqlite::memory:") });
    if (HAS_PG) stores.push({ name: "postgresql", store: openStore(PG_URL, { poolSize: 1 }) });
  });

  afterAll(async () => {
    for (const { store } of stores) await store.close();
  });

  /** What `fits` says of a take of `take` on the row (a one-row table named as the guard's). */
  async function evaluate(store: Store, fits: TakeGuard, take: number, row: string, bound: boolean) {
    const condition = bound ? boundGuard(fits, take) : sql.raw(fits(String(take)));
    const result = await sql<{
      fits: unknown;
    }>`select case when ${condition} then 1 else 0 end as fits from ${sql.raw(row)}`.execute(store.db);
    return Number(result.rows[0]?.fits) === 1;
  }

  /**
   * Each guard with its rule: a row and a take at the edge of its room, the one-row table the
   * guard reads, and what the rule of core/ledger/charge-rules.ts says of the take.
   */
  const guards = [
    {
      name: "a user's take fits exactly when userAllows says so",
      fits: userTakeFits,
      case: userRow.chain((u) => fc.tuple(fc.constant(u), takeNear(u.quota + u.creditLine))),
      table: (u: { quota: number; creditLine: number }) =>
        `(select ${u.quota} as quota, ${u.creditLine} as credit_line) as users`,
      allows: (u: { quota: number; creditLine: number }, take: number) => userAllows(u.quota, u.creditLine, take),
    },
    {
      name: "a token's take fits exactly when tokenAllows says so",
      fits: tokenTakeFits,
      case: tokenRow.chain((t) => fc.tuple(fc.constant(t), takeNear(t.limit === null ? null : t.limit - t.used))),
      table: (t: { limit: number | null; used: number }) =>
        `(select cast(${t.limit ?? "null"} as bigint) as quota_limit, ${t.used} as used_quota) as tokens`,
      allows: (t: { limit: number | null; used: number }, take: number) => tokenAllows(t.limit, t.used, take),
    },
  ] as const;

  for (const guard of guards) {
    it(`${guard.name}, and a take of zero always where nothing taken fits`, async () => {
      const table = guard.table as (row: unknown) => string;
      const allows = guard.allows as (row: unknown, take: number) => boolean;
      for (const { name, store } of stores) {
        await fc.assert(
          fc.asyncProperty(guard.case as fc.Arbitrary<[unknown, number]>, fc.boolean(), async ([row, take], bound) => {
            const allowed = allows(row, take);
            const fits = await evaluate(store, guard.fits, take, table(row), bound);
            expect({ name, fits }).toEqual({ name, fits: allowed });
            const orNothing = await evaluate(store, orNothingTaken(guard.fits), take, table(row), bound);
            expect({ name, orNothing }).toEqual({ name, orNothing: take === 0 || allowed });
          }),
          { numRuns: 150 },
        );
      }
    }, 60_000);
  }
});
