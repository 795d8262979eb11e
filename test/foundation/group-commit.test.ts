import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/connection.js";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

describe("group commit on SQLite: the mechanism", () => {
  let dir: string;
  let db: SqliteConnection;
  let commits: GroupCommit;
  let batches: number;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-group-commit-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => db?.close());

  function open(name: string) {
    db = openSqlite(path.join(dir, name));
    db.pragma("journal_mode = WAL");
    db.exec("create table items (name text primary key, amount integer not null)");
    batches = 0;
    commits = new GroupCommit(db, async (fn) => {
      batches += 1;
      fn();
    });
  }
  const insert = (name: string, amount: number) =>
    db.transaction(() => {
      db.prepare("insert into items (name, amount) values (?, ?)").run(name, amount);
      if (amount < 0) throw new Error(`negative amount for ${name}`);
      return name;
    });
  const names = () =>
    (db.prepare("select name from items order by name").all() as { name: string }[]).map((r) => r.name);

  it("runs the operations asked for in one turn in one transaction, and an operation that throws alone is undone", async () => {
    open("one-turn.sqlite");
    const outcomes = await Promise.allSettled([
      commits.run(insert("a", 1)),
      commits.run(insert("b", -1)),
      commits.run(insert("c", 3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[0] as PromiseFulfilledResult<string>).value).toBe("a");
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain("negative amount for b");
    expect(batches).toBe(1);
    // Row "b" was written before its operation threw: only its savepoint was rolled back.
    expect(names()).toEqual(["a", "c"]);
  });

  it("undoes alone a plain operation (no savepoint of its own) that throws after writing, and commits the others once", async () => {
    open("plain.sqlite");
    const plain = (name: string, amount: number) => () => {
      db.prepare("insert into items (name, amount) values (?, ?)").run(name, amount);
      if (amount < 0) throw new Error(`negative amount for ${name}`);
      return name;
    };
    const outcomes = await Promise.allSettled([
      commits.runPlain(plain("a", 1)),
      commits.run(insert("b", 2)),
      commits.runPlain(plain("c", -1)),
      commits.runPlain(plain("d", 4)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[3] as PromiseFulfilledResult<string>).value).toBe("d");
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain("negative amount for c");
    // One batch: the row "c" wrote is gone, the others are there once (the primary key would refuse a second "a").
    expect(batches).toBe(1);
    expect(names()).toEqual(["a", "b", "d"]);
    expect(db.prepare("select sum(amount) as total from items").get()).toEqual({ total: 7 });
  });

  it("answers a caller only once its operation is committed: another connection already sees it", async () => {
    open("committed.sqlite");
    await commits.run(insert("seen", 1));
    const other = openSqlite(path.join(dir, "committed.sqlite"), { readonly: true });
    try {
      expect(other.prepare("select count(*) as n from items where name = 'seen'").get()).toEqual({ n: 1 });
    } finally {
      other.close();
    }
  });

  it("fails every operation of a batch whose transaction SQLite ended, the ones that ran before included", async () => {
    open("ended.sqlite");
    const endsTheTransaction = db.transaction(() => {
      db.exec("rollback");
    });
    const outcomes = await Promise.allSettled([
      commits.run(insert("before", 1)),
      commits.run(endsTheTransaction),
      commits.run(insert("after", 1)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(names()).toEqual([]);
    // The next turn starts a fresh transaction and commits normally.
    await commits.run(insert("next", 1));
    expect(names()).toEqual(["next"]);
  });

  it("splits a long queue into several transactions and answers every operation", async () => {
    open("long.sqlite");
    const all = await Promise.all(Array.from({ length: 600 }, (_, i) => commits.run(insert(`n${i}`, i))));
    expect(all).toHaveLength(600);
    expect(batches).toBeGreaterThanOrEqual(3);
    expect(names()).toHaveLength(600);
  });
});

describe("group commit on SQLite: the ledger", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite");
  });
  afterAll(async () => {
    await gw?.close();
  });
  const ledger = () => gw.gateway.ctx.ledger;

  it("charges asked for together fail one by one: a charge over what is left fails alone, the others commit", async () => {
    const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
    const outcomes = await Promise.allSettled([
      ledger().charge({ userId, tokenId, amount: 400, reference: "content:together-a" }),
      ledger().charge({ userId, tokenId, amount: 700, reference: "content:together-b" }),
      ledger().charge({ userId, tokenId, amount: 500, reference: "content:together-c" }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "insufficient_quota" });
    expect(await gw.balance(userId)).toBe(100);
    const charges = (await ledger().entries(userId, { limit: 100 })).filter((r) => r.kind === "charge");
    expect(charges.map((r) => r.reference).sort()).toEqual(["content:together-a", "content:together-c"]);
    expect(await ledger().ledgerSum(userId)).toBe(100);
  });

  it("undoes the user's side of a charge the token's limit refuses, while the batch's other charges commit", async () => {
    const { userId, tokenId } = await gw.createUser({ quota: 10_000, token: { quotaLimit: 300 } });
    const outcomes = await Promise.allSettled([
      ledger().charge({ userId, tokenId, amount: 200, reference: "content:limit-a" }),
      ledger().charge({ userId, tokenId, amount: 200, reference: "content:limit-b" }),
      ledger().charge({ userId, tokenId: null, amount: 50, reference: "content:limit-c" }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "token_quota_exceeded" });
    const user = await gw.gateway.ctx.users.get(userId);
    expect(Number(user?.quota)).toBe(10_000 - 250);
    expect(Number(user?.used_quota)).toBe(250);
    const token = await gw.gateway.ctx.tokens.get(tokenId);
    expect(Number(token?.used_quota)).toBe(200);
    expect(await ledger().ledgerSum(userId)).toBe(10_000 - 250);
  });
});

describe("group commit on SQLite: one user's balance moved in memory across a batch", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("sqlite");
  });
  afterAll(async () => {
    await gw?.close();
  });
  const ledger = () => gw.gateway.ctx.ledger;

  it("lets a later hold of the same batch spend what an earlier settlement gave back, and writes the rows exactly", async () => {
    const { userId, tokenId } = await gw.createUser({ quota: 1_000, token: { quotaLimit: 900 } });
    await ledger().charge({ userId, tokenId, amount: 800, reference: "content:memory-a" });
    const outcomes = await Promise.allSettled([
      ledger().charge({ userId, tokenId, amount: 300, reference: "content:memory-b" }), // 200 left: refused
      ledger().settle("content:memory-a", 100), // gives back 700
      ledger().charge({ userId, tokenId, amount: 300, reference: "content:memory-c" }), // now fits
      ledger().charge({ userId, tokenId, amount: 600, reference: "content:memory-d" }), // user has 600, token 500 left
      ledger().charge({ userId, tokenId: null, amount: 600, reference: "content:memory-e" }), // fits the user
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: "insufficient_quota" });
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: "token_quota_exceeded" });
    const user = await gw.gateway.ctx.users.get(userId);
    expect(Number(user?.quota)).toBe(1_000 - 100 - 300 - 600);
    expect(Number(user?.used_quota)).toBe(100 + 300 + 600);
    const token = await gw.gateway.ctx.tokens.get(tokenId);
    expect(Number(token?.used_quota)).toBe(100 + 300);
    expect(await ledger().ledgerSum(userId)).toBe(0);
  });

  it("gives every operation the same outcome when one of the batch throws and the batch runs again guarded", async () => {
    const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
    await ledger().charge({ userId, tokenId, amount: 100, reference: "content:again-a" });
    const outcomes = await Promise.allSettled([
      ledger().charge({ userId, tokenId, amount: 500, reference: "content:again-b" }),
      // The same reference again: its ledger row is refused by the unique index after its take.
      ledger().charge({ userId, tokenId, amount: 200, reference: "content:again-a" }),
      ledger().settle("content:again-b", 450),
      ledger().charge({ userId, tokenId, amount: 400, reference: "content:again-c" }),
      ledger().charge({ userId, tokenId, amount: 100, reference: "content:again-d" }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "rejected"]);
    const user = await gw.gateway.ctx.users.get(userId);
    expect(Number(user?.quota)).toBe(1_000 - 100 - 450 - 400);
    expect(Number(user?.used_quota)).toBe(100 + 450 + 400);
    expect(await ledger().ledgerSum(userId)).toBe(50);
  });
});
