import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/auth/passwords.js";
import { ConsoleAccounts } from "../../src/store/console-accounts.js";
import { ConsoleSessions } from "../../src/store/console-sessions.js";
import { openStore, type Store } from "../../src/store/database.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { UserImages } from "../../src/store/user-images.js";
import { Users } from "../../src/store/users.js";
import type { StoreKind } from "../support/gateway.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

const kinds: StoreKind[] = HAS_PG ? ["sqlite", "postgres"] : ["sqlite"];
if (!HAS_PG) console.log("console store tests on PostgreSQL skipped: TEST_DATABASE_URL is not set");

describe.each(kinds)("the console's tables on %s", (kind) => {
  let store: Store;
  let drop: (() => Promise<void>) | null = null;
  let dir: string;
  let accounts: ConsoleAccounts;
  let sessions: ConsoleSessions;
  let users: Users;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mg-console-store-"));
    let url = `sqlite:${path.join(dir, "gateway.sqlite")}`;
    if (kind === "postgres") {
      const db = await createTestDatabase();
      url = db.url;
      drop = db.drop;
    }
    store = openStore(url);
    await migrateToLatest(store);
    accounts = new ConsoleAccounts(store.db);
    sessions = new ConsoleSessions(store.db);
    users = new Users(store.db);
  });
  afterAll(async () => {
    await store?.close();
    if (drop) await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps operator names unique and stores scrypt hashes with their parameters", async () => {
    const hash = await hashPassword("a long enough password", 15);
    expect(hash).toMatch(/^scrypt\$15\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await hashPassword("a long enough password", 15)).not.toBe(hash);
    const op = await accounts.createOperator("ops", hash);
    expect(op?.name).toBe("ops");
    expect(await accounts.createOperator("ops", hash)).toBeUndefined();
    const stored = await accounts.operatorByName("ops");
    expect(await verifyPassword("a long enough password", stored?.password_hash ?? "")).toBe(true);
    expect(await verifyPassword("a long enough passworD", stored?.password_hash ?? "")).toBe(false);
    expect((await accounts.setOperatorStatus("ops", "disabled"))?.status).toBe("disabled");
    expect(await accounts.setOperatorStatus("nobody", "disabled")).toBeUndefined();
  });

  it("keeps user emails unique (lower-case) and finds users by email or unambiguous name", async () => {
    const a = await users.create({ name: "same" });
    const b = await users.create({ name: "same" });
    expect(await accounts.setUserEmail(Number(a.id), "Same@Example.com")).toBe(true);
    expect(await accounts.setUserEmail(Number(b.id), "same@example.COM")).toBe(false);
    expect((await accounts.usersByLogin("SAME@example.com")).map((u) => Number(u.id))).toEqual([Number(a.id)]);
    // Without a password neither can sign in by name; with both having one, the name is ambiguous.
    expect(await accounts.usersByLogin("same")).toEqual([]);
    await accounts.setUserPassword(Number(a.id), "scrypt$4$8$1$x$y");
    await accounts.setUserPassword(Number(b.id), "scrypt$4$8$1$x$y");
    expect(await accounts.usersByLogin("same")).toHaveLength(2);
    expect(await accounts.userNameOrEmailTaken("same", null)).toBe("name");
    expect(await accounts.userNameOrEmailTaken("fresh", "same@example.com")).toBe("email");
    expect(await accounts.userNameOrEmailTaken("fresh", "fresh@example.com")).toBeNull();
  });

  it("uses an invite once and never after its expiry", async () => {
    const user = await users.create({ name: "invitee" });
    await sessions.createInvite({ token_hash: "h1", user_id: Number(user.id), created_at: 100, expires_at: 200 });
    expect(await sessions.openInvite("h1", 150)).toMatchObject({ token_hash: "h1" });
    expect(await sessions.openInvite("h1", 200)).toBeUndefined();
    expect(await sessions.useInvite("h1", 200)).toBe(false);
    const results = await Promise.all([sessions.useInvite("h1", 150), sessions.useInvite("h1", 150)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await sessions.openInvite("h1", 150)).toBeUndefined();
  });

  it("drops sessions past their end or idle, and all of an account's at once", async () => {
    const row = (id: string, subject: number, lastSeen: number, expires: number) => ({
      id_hash: id,
      role: "operator",
      subject_id: subject,
      csrf_token: "c",
      created_at: 0,
      last_seen_at: lastSeen,
      expires_at: expires,
    });
    await sessions.create(row("live", 1, 1000, 5000));
    await sessions.create(row("ended", 1, 1000, 1000));
    await sessions.create(row("idle", 2, 10, 5000));
    await sessions.deleteExpired(1000, 500);
    expect(await sessions.get("live")).toMatchObject({ subject_id: 1 });
    expect(await sessions.get("ended")).toBeUndefined();
    expect(await sessions.get("idle")).toBeUndefined();
    await sessions.deleteAllOf("operator", 1);
    expect(await sessions.get("live")).toBeUndefined();
  });

  for (const through of ["the query builder", "the store (on SQLite: its group commit)"]) {
    it(`lists a user's images newest first, paged, added through ${through}`, async () => {
      const user = await users.create({ name: "painter" });
      const images = through === "the query builder" ? new UserImages(store.db) : new UserImages(store.db, store);
      await images.add(Number(user.id), "m", ["u1", "u2", "u3"], 10);
      await Promise.all([images.add(Number(user.id), "n", ["u4"], 11), images.add(Number(user.id), "n", [], 11)]);
      const first = await images.list(Number(user.id), { limit: 2 });
      expect(first.map((i) => [i.url, i.model, i.created_at])).toEqual([
        ["u4", "n", 11],
        ["u3", "m", 10],
      ]);
      const next = await images.list(Number(user.id), { limit: 3, before: Number(first[1]?.id) });
      expect(next.map((i) => i.url)).toEqual(["u2", "u1"]);
    });
  }
});
