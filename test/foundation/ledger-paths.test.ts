import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/core/errors.js";
import { openStore, type Store } from "../../src/store/database.js";
import { Ledger } from "../../src/store/ledger.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { Tokens } from "../../src/store/tokens.js";
import { Users } from "../../src/store/users.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

// The same random sequences of money operations, replayed through both ledger engines and their
// shared in-transaction form: SQLite's engine (prepared statements in group commits), PostgreSQL's
// engine (batches in its group commit, pipelined) and, on each store, the in-transaction form
// (the query builder's steps, what runs inside larger transactions such as a task's submit).
// Every outcome, balance, token usage, ledger row and charge row must come out the same. A second
// property issues operations in bursts, all in one event-loop turn, as concurrent requests do:
// each one must come out as if it had run alone, in the order asked.

if (!HAS_PG) console.log("[media-gateway tests] the PostgreSQL ledger path is left out: TEST_DATABASE_URL is not set");

/** A user of a sequence: a balance, a credit line and one token, with or without a limit. */
const userSpec = fc.record({
  topUp: fc.integer({ min: 0, max: 500 }),
  creditLine: fc.integer({ min: 0, max: 100 }),
  tokenLimit: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
});

const user = fc.integer({ min: 0, max: 1 });
/** A small pool of references, so that operations meet: settle what was charged, charge twice... */
const ref = fc.integer({ min: 0, max: 3 });

const operation = fc.oneof(
  fc.record({
    op: fc.constant("charge" as const),
    user,
    ref,
    withToken: fc.boolean(),
    amount: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(-1, 1.5)),
  }),
  fc.record({ op: fc.constant("settle" as const), ref, actual: fc.integer({ min: 0, max: 700 }) }),
  fc.record({ op: fc.constant("refund" as const), ref }),
  fc.record({ op: fc.constant("noteUsage" as const), ref, seen: fc.integer({ min: 0, max: 300 }) }),
  fc.record({
    op: fc.constant("topUp" as const),
    user,
    ref: fc.integer({ min: 0, max: 1 }),
    amount: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constantFrom(0, -5)),
  }),
);

type UserSpec = typeof userSpec extends fc.Arbitrary<infer T> ? T : never;
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/**
 * Operations asked for together: holds, settlements and refunds of both users over a few
 * references, so that a burst holds one user's several holds (together above the balance while
 * each fits), a hold and its own closing, and closings of charges opened in an earlier burst.
 */
const burstRef = fc.integer({ min: 0, max: 5 });
const burstOperation = fc.oneof(
  fc.record({
    op: fc.constant("charge" as const),
    user,
    ref: burstRef,
    withToken: fc.boolean(),
    amount: fc.integer({ min: 0, max: 200 }),
  }),
  fc.record({ op: fc.constant("settle" as const), ref: burstRef, actual: fc.integer({ min: 0, max: 400 }) }),
  fc.record({ op: fc.constant("refund" as const), ref: burstRef }),
);
const bursts = fc.array(fc.array(burstOperation, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 });

interface Path {
  name: string;
  store: Store;
  ledger: Ledger;
  /** Holds and closings run in a transaction of their own, in the in-transaction form. */
  inTransaction: boolean;
  /** Operations asked for together are carried out in the order asked. */
  inOrder: boolean;
}

/** What an operation answered, ids aside: its outcome, or the kind of its error. */
function answerOf(result: PromiseSettledResult<unknown>): unknown {
  if (result.status === "fulfilled") return result.value ?? "done";
  const err = result.reason;
  if (err instanceof GatewayError) return `error ${err.errorName}`;
  if (err instanceof RangeError) return "error range";
  // The store refused the row itself (a second charge of one reference hits the unique key).
  return "error store";
}

async function replay(path: Path, run: number, users: UserSpec[], steps: Operation[][]) {
  const { store, ledger, inTransaction } = path;
  const made: { userId: number; tokenId: number }[] = [];
  for (const [i, spec] of users.entries()) {
    const row = await new Users(store.db).create({ name: `u${run}-${i}`, creditLine: spec.creditLine });
    const token = await new Tokens(store.db).create({ userId: row.id, name: "t", quotaLimit: spec.tokenLimit });
    if (spec.topUp > 0) await ledger.topUp(row.id, spec.topUp, `start-${run}`);
    made.push({ userId: row.id, tokenId: token.row.id });
  }
  const reference = (r: number) => `content:${run}-${r}`;
  const answers: unknown[] = [];
  const ask = (o: Operation): Promise<unknown> => {
    if (o.op === "charge") {
      const who = made[o.user] as { userId: number; tokenId: number };
      const input = {
        userId: who.userId,
        tokenId: o.withToken ? who.tokenId : null,
        amount: o.amount,
        reference: reference(o.ref),
        note: `charge ${o.ref}`,
        closeBy: 1,
      };
      return inTransaction ? ledger.transaction((trx) => ledger.chargeIn(trx, input)) : ledger.charge(input);
    }
    if (o.op === "settle") {
      const [ref, note] = [reference(o.ref), `settle ${o.ref}`];
      return inTransaction
        ? ledger.transaction((trx) => ledger.settleIn(trx, ref, o.actual, note))
        : ledger.settle(ref, o.actual, note);
    }
    if (o.op === "refund") {
      const [ref, note] = [reference(o.ref), `refund ${o.ref}`];
      return inTransaction ? ledger.transaction((trx) => ledger.refundIn(trx, ref, note)) : ledger.refund(ref, note);
    }
    if (o.op === "noteUsage") return ledger.noteUsage(reference(o.ref), o.seen, 2);
    const who = made[o.user] as { userId: number };
    return ledger.topUp(who.userId, o.amount, `top-${o.ref}`, `top ${o.ref}`);
  };
  for (const step of steps) {
    // All of a step is asked for in the same turn, before any of it is answered.
    const settled = await Promise.allSettled(step.map((o) => Promise.resolve().then(() => ask(o))));
    answers.push(settled.map(answerOf));
  }
  return { answers, books: await books(store, ledger, made, run) };
}

/** Everything the money rules decide for the users of one sequence, ids and clocks aside. */
async function books(store: Store, ledger: Ledger, made: { userId: number; tokenId: number }[], run: number) {
  const runPart = (reference: string) => reference.replace(`${run}-`, "").replace(/^user:\d+:/, "user:");
  const out = [];
  for (const [i, { userId, tokenId }] of made.entries()) {
    const u = await store.db
      .selectFrom("users")
      .select(["quota", "used_quota", "credit_line"])
      .where("id", "=", userId)
      .executeTakeFirstOrThrow();
    const t = await store.db
      .selectFrom("tokens")
      .select(["used_quota"])
      .where("id", "=", tokenId)
      .executeTakeFirstOrThrow();
    const rows = await store.db
      .selectFrom("ledger")
      .select(["kind", "amount", "token_id", "reference", "note"])
      .where("user_id", "=", userId)
      .orderBy("id")
      .execute();
    const charges = await store.db
      .selectFrom("charges")
      .select(["reference", "token_id", "state", "held", "seen", "settled", "uncollected", "close_by", "close_reason"])
      .where("user_id", "=", userId)
      .orderBy("reference")
      .execute();
    const balance = Number(u.quota);
    out.push({
      user: i,
      balance,
      usedQuota: Number(u.used_quota),
      tokenUsed: Number(t.used_quota),
      ledgerSumIsBalance: (await ledger.ledgerSum(userId)) === balance,
      debtWithinCreditLine: balance >= -Number(u.credit_line),
      ledger: rows.map((r) => ({
        kind: r.kind,
        amount: Number(r.amount),
        token: r.token_id === null ? null : "own",
        reference: runPart(r.reference),
        note: r.note,
      })),
      charges: charges.map((c) => ({
        reference: runPart(c.reference),
        token: c.token_id === null ? null : "own",
        state: c.state,
        held: Number(c.held),
        seen: c.seen === null ? null : Number(c.seen),
        settled: c.settled === null ? null : Number(c.settled),
        uncollected: Number(c.uncollected),
        closeBy: Number(c.close_by),
        closeReason: c.close_reason,
      })),
    });
  }
  return out;
}

describe("the ledger paths agree", () => {
  const paths: Path[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const fast = openStore("sqlite::memory:");
    const sqliteBuilder = openStore("sqlite::memory:");
    cleanups.push(
      () => fast.close(),
      () => sqliteBuilder.close(),
    );
    await migrateToLatest(fast);
    await migrateToLatest(sqliteBuilder);
    paths.push({
      name: "sqlite engine",
      store: fast,
      ledger: Ledger.forStore(fast),
      inTransaction: false,
      inOrder: true,
    });
    // The in-transaction form on SQLite: the path of operations inside larger transactions.
    paths.push({
      name: "sqlite in-transaction form",
      store: sqliteBuilder,
      ledger: Ledger.forStore(sqliteBuilder),
      inTransaction: true,
      inOrder: true,
    });
    if (HAS_PG) {
      const openPg = async () => {
        const database = await createTestDatabase();
        const pg = openStore(database.url, { poolSize: 2 });
        cleanups.push(async () => {
          await pg.close();
          await database.drop();
        });
        await migrateToLatest(pg);
        return pg;
      };
      const grouped = await openPg();
      paths.push({
        name: "postgresql engine",
        store: grouped,
        ledger: Ledger.forStore(grouped),
        inTransaction: false,
        inOrder: true,
      });
      // The in-transaction form on PostgreSQL: concurrent transactions of its own take no order,
      // so it is compared on one operation at a time only.
      const builder = await openPg();
      paths.push({
        name: "postgresql in-transaction form",
        store: builder,
        ledger: Ledger.forStore(builder),
        inTransaction: true,
        inOrder: false,
      });
    }
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  let run = 0;

  /** Replays `steps` through `chosen` paths and expects the same from each. */
  async function expectAgreement(chosen: Path[], users: UserSpec[], steps: Operation[][]) {
    run += 1;
    const results = [];
    for (const path of chosen) results.push({ path: path.name, ...(await replay(path, run, users, steps)) });
    const [first, ...others] = results;
    for (const other of others) {
      expect({ path: other.path, answers: other.answers, books: other.books }).toEqual({
        path: other.path,
        answers: first?.answers,
        books: first?.books,
      });
    }
    for (const book of first?.books ?? []) {
      expect(book.ledgerSumIsBalance).toBe(true);
      expect(book.debtWithinCreditLine).toBe(true);
    }
  }

  it("gives the same outcomes, balances, token usage, ledger rows and charge rows for any sequence", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(userSpec, { minLength: 2, maxLength: 2 }),
        fc.array(operation, { maxLength: 14 }),
        (users, ops) =>
          expectAgreement(
            paths,
            users,
            ops.map((o) => [o]),
          ),
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it("gives each of the operations asked for in one turn the outcome it would have had alone, in the order asked", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(userSpec, { minLength: 2, maxLength: 2 }), bursts, (users, steps) =>
        expectAgreement(
          paths.filter((p) => p.inOrder),
          users,
          steps,
        ),
      ),
      { numRuns: 80 },
    );
  }, 180_000);
});
