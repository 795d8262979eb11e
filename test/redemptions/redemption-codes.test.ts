import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleClient, createConsoleUser, TEST_PASSWORD_COST } from "../console/console-client.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { generateCodes, redeem } from "./harness.js";

const kinds: StoreKind[] = HAS_PG ? ["sqlite", "postgres"] : ["sqlite"];
const QUOTA_PER_UNIT = 500_000;

describe.each(kinds)("redemption codes on %s", (kind) => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway(kind, { console: { passwordCost: TEST_PASSWORD_COST }, quotaPerUnit: QUOTA_PER_UNIT });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const ledgerRows = (reference: string) =>
    gw.gateway.ctx.store.db.selectFrom("ledger").selectAll().where("reference", "=", reference).execute();

  it("generates, lists and exports a batch once, keeping no full code after the export", async () => {
    const made = await gw.admin("POST", "/redemption-batches", {
      count: 3,
      amount: 2.5,
      prefix: "gift",
      per_user_limit: 2,
      note: "launch",
    });
    expect(made.status).toBe(200);
    const batch = made.body.data;
    expect(batch).toMatchObject({
      prefix: "GIFT",
      quota: 1_250_000,
      amount: 2.5,
      count: 3,
      used: 0,
      per_user_limit: 2,
      status: "enabled",
      exported_at: null,
    });

    const list = await gw.admin("GET", "/redemption-batches");
    expect(list.body.data.map((b: { id: number }) => b.id)).toContain(batch.id);
    const codes = await gw.admin("GET", `/redemption-batches/${batch.id}/codes`);
    expect(codes.body.data).toHaveLength(3);
    for (const code of codes.body.data) {
      expect(code.status).toBe("unused");
      expect(code.code).toMatch(/^GIFT-[0-9A-Z]{4}…[0-9A-Z]{4}$/);
    }

    const res = await fetch(`${gw.url}/api/admin/redemption-batches/${batch.id}/export`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.adminKey}` },
    });
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split("\r\n");
    expect(lines).toHaveLength(4);
    const full = lines.slice(1).map((l) => l.split(","));
    for (const [code, batchId, quota, amount] of full) {
      expect(code).toMatch(/^GIFT-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}$/);
      expect([batchId, quota, amount]).toEqual([String(batch.id), "1250000", "2.5"]);
    }

    const again = await gw.admin("POST", `/redemption-batches/${batch.id}/export`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");

    // The store keeps hashes and the visible ends only: no column holds a full code any more.
    const rows = await gw.gateway.ctx.store.db
      .selectFrom("redemption_codes")
      .selectAll()
      .where("batch_id", "=", batch.id)
      .execute();
    const stored = JSON.stringify(rows);
    for (const [code] of full) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain((code as string).replaceAll("-", ""));
    }
    expect(rows.every((r) => r.plain === null)).toBe(true);
    expect((await gw.admin("GET", `/redemption-batches/${batch.id}`)).body.data.exported_at).toBeGreaterThan(0);
  });

  it.each([
    [{ count: 1, amount: -1 }, "amount"],
    [{ count: 1, quota: Number.MAX_SAFE_INTEGER + 2 }, "quota"],
    [{ count: 1, amount: 1e15 }, "amount"],
    [{ count: 10_001, quota: 10 }, "count"],
    [{ count: 0, quota: 10 }, "count"],
    [{ count: 1, quota: 10, amount: 1 }, "amount"],
    [{ count: 1 }, "quota"],
    [{ count: 1, quota: 10, expires_at: 1000 }, "expires_at"],
    [{ count: 1, quota: 10, prefix: "no spaces" }, "prefix"],
    [{ count: 1, quota: 10, per_user_limit: 0 }, "per_user_limit"],
  ])("refuses the batch %j with a 400 naming %s", async (body, field) => {
    const res = await gw.admin("POST", "/redemption-batches", body);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(field);
  });

  it("credits a code once through the API with a token, the ledger row referencing the code", async () => {
    const user = await gw.createUser({ quota: 100 });
    const { batch, codes } = await generateCodes(gw, { count: 1, quota: 7_000 });
    const code = codes[0] as string;
    // Any case, dashes or not: the same code.
    const first = await redeem(gw, user.key, code.toLowerCase().replaceAll("-", ""));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ batch_id: batch.id, quota: 7_000, amount: 0.014, balance: 7_100 });
    expect(await gw.balance(user.userId)).toBe(7_100);
    const rows = await ledgerRows(first.body.reference);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "topup", amount: 7_000, user_id: user.userId, token_id: user.tokenId });

    const second = await redeem(gw, user.key, code);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "redemption_code_used", param: "code" });
    expect(await gw.balance(user.userId)).toBe(7_100);
    const listed = await gw.admin("GET", `/redemption-batches/${batch.id}/codes`);
    expect(listed.body.data[0]).toMatchObject({ status: "used", user_id: user.userId });
    expect((await gw.admin("GET", `/redemption-batches/${batch.id}`)).body.data.used).toBe(1);
  });

  it("refuses unknown, disabled and expired codes with the reason, crediting nothing", async () => {
    const user = await gw.createUser({ quota: 0 });
    const unknown = await redeem(gw, user.key, "NOPE-AAAAA-BBBBB-CCCCC-DDDDD");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("redemption_code_unknown");

    const one = await generateCodes(gw, { count: 2, quota: 10 });
    const codeRows = await gw.admin("GET", `/redemption-batches/${one.batch.id}/codes`);
    const disabledOne = await gw.admin("POST", `/redemption-codes/${codeRows.body.data[0].id}/disable`);
    expect(disabledOne.body.data.status).toBe("disabled");
    const disabled = await redeem(gw, user.key, one.codes[0] as string);
    expect(disabled.status).toBe(403);
    expect(disabled.body.error.code).toBe("redemption_code_disabled");

    await gw.admin("POST", `/redemption-batches/${one.batch.id}/disable`);
    const batchOff = await redeem(gw, user.key, one.codes[1] as string);
    expect(batchOff.status).toBe(403);
    expect(batchOff.body.error.code).toBe("redemption_code_disabled");
    await gw.admin("POST", `/redemption-batches/${one.batch.id}/enable`);
    expect((await redeem(gw, user.key, one.codes[1] as string)).status).toBe(200);
    expect(await gw.balance(user.userId)).toBe(10);

    const soon = await generateCodes(gw, { count: 1, quota: 10, expires_at: Math.floor(Date.now() / 1000) + 3600 });
    await gw.gateway.ctx.store.db
      .updateTable("redemption_batches")
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where("id", "=", soon.batch.id)
      .execute();
    const expired = await redeem(gw, user.key, soon.codes[0] as string);
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe("redemption_code_expired");
    expect(await gw.balance(user.userId)).toBe(10);
  });

  it("holds the limit per user of a batch", async () => {
    const alice = await gw.createUser({ quota: 0 });
    const bob = await gw.createUser({ quota: 0 });
    const { codes } = await generateCodes(gw, { count: 3, quota: 5, per_user_limit: 2 });
    expect((await redeem(gw, alice.key, codes[0] as string)).status).toBe(200);
    expect((await redeem(gw, alice.key, codes[1] as string)).status).toBe(200);
    const third = await redeem(gw, alice.key, codes[2] as string);
    expect(third.status).toBe(409);
    expect(third.body.error.code).toBe("redemption_limit_reached");
    expect(await gw.balance(alice.userId)).toBe(10);
    // Refused, the code stays unused: another user redeems it.
    expect((await redeem(gw, bob.key, codes[2] as string)).status).toBe(200);
    expect(await gw.balance(bob.userId)).toBe(5);
  });

  it("slows guessing: past the failed-attempt limit every redemption is refused, a good code too", async () => {
    const user = await gw.createUser({ quota: 0 });
    const { codes } = await generateCodes(gw, { count: 1, quota: 5 });
    for (let i = 0; i < 10; i++) {
      expect((await redeem(gw, user.key, `GUESS${i}`)).status).toBe(404);
    }
    const blocked = await redeem(gw, user.key, codes[0] as string);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe("rate_limited");
    expect(await gw.balance(user.userId)).toBe(0);
    // Another user is not slowed by this one's failures, and the code is still good.
    const other = await gw.createUser({ quota: 0 });
    expect((await redeem(gw, other.key, codes[0] as string)).status).toBe(200);
  });

  it("redeems in the console with a session, refusals in the console's shape", async () => {
    await createConsoleUser(gw, "carol", { quota: 1 });
    const carol = new ConsoleClient(gw.url);
    expect((await carol.login("carol")).status).toBe(200);
    const { codes } = await generateCodes(gw, { count: 1, quota: 99 });
    const ok = await carol.call("POST", "/console/api/me/redemptions", { code: codes[0] });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ quota: 99, balance: 100 });
    const again = await carol.call("POST", "/console/api/me/redemptions", { code: codes[0] });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "redemption_code_used", field: "code" });
    const noCsrf = await carol.call("POST", "/console/api/me/redemptions", { code: codes[0] }, { csrf: null });
    expect(noCsrf.status).toBe(403);
    const anonymous = new ConsoleClient(gw.url);
    expect((await anonymous.call("POST", "/console/api/me/redemptions", { code: "X" })).status).toBe(401);
  });

  it("counts console failures per address too: another account from that address is slowed, its token is not", async () => {
    const mallory = await createConsoleUser(gw, "mallory", { quota: 0 });
    const dan = await createConsoleUser(gw, "dan", { quota: 0 });
    const m = new ConsoleClient(gw.url);
    const d = new ConsoleClient(gw.url);
    expect((await m.login("mallory")).status).toBe(200);
    expect((await d.login("dan")).status).toBe(200);
    const { codes } = await generateCodes(gw, { count: 1, quota: 5 });
    // carol's one failure above came from this address too.
    let failures = 1;
    while (failures < 10) {
      expect((await m.call("POST", "/console/api/me/redemptions", { code: `GUESS${failures}` })).status).toBe(404);
      failures++;
    }
    const slowed = await d.call("POST", "/console/api/me/redemptions", { code: codes[0] });
    expect(slowed.status).toBe(429);
    expect(slowed.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await gw.balance(dan)).toBe(0);
    const token = await gw.admin("POST", `/users/${dan}/tokens`, { name: "api" });
    expect((await redeem(gw, token.body.data.key, codes[0] as string)).status).toBe(200);
    expect(await gw.balance(dan)).toBe(5);
    expect(await gw.balance(mallory)).toBe(0);
  });

  it("credits a code once under concurrent redeems", async () => {
    const users = await Promise.all(Array.from({ length: 8 }, () => gw.createUser({ quota: 0 })));
    const { codes } = await generateCodes(gw, { count: 1, quota: 1_000 });
    const answers = await Promise.all(users.map((u) => redeem(gw, u.key, codes[0] as string)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(7);
    const balances = await Promise.all(users.map((u) => gw.balance(u.userId)));
    expect(balances.reduce((a, b) => a + b, 0)).toBe(1_000);
  });
});
