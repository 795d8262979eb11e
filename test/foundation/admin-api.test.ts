import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

/** Every admin route, with a body that would be valid, so only the key decides. */
const ADMIN_ROUTES: [string, string, unknown?][] = [
  ["GET", "/users"],
  ["POST", "/users", { name: "x" }],
  ["GET", "/users/1"],
  ["PATCH", "/users/1", { status: "disabled" }],
  ["POST", "/users/1/topup", { amount: 5 }],
  ["GET", "/users/1/ledger"],
  ["POST", "/users/1/tokens", { name: "t" }],
  ["GET", "/users/1/tokens"],
  ["PATCH", "/tokens/1", { status: "disabled" }],
  ["DELETE", "/tokens/1"],
  ["GET", "/channels"],
  ["POST", "/channels", { name: "c", type: "gemini", base_url: "http://127.0.0.1:9", key: "k", models: ["m"] }],
  ["GET", "/channels/1"],
  ["PATCH", "/channels/1", { status: "disabled" }],
  ["GET", "/prices"],
  ["PUT", "/prices", { kind: "task", name: "audioa:MUSIC", price: 1 }],
  ["GET", "/group-ratios"],
  ["PUT", "/group-ratios/vip", { ratio: 2 }],
  ["GET", "/tasks"],
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`admin API [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${gw.url}/api/admin${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };

    it("refuses every admin route without the admin key, with a wrong one, or with a user token", async () => {
      const { key } = await gw.createUser();
      const carriers: Record<string, string>[] = [
        {},
        { authorization: "Bearer wrong-admin-key-000000000000" },
        { "x-admin-key": `${gw.adminKey}x` },
        { authorization: `Bearer ${key}` },
        { authorization: `Basic ${Buffer.from(`admin:${gw.adminKey}`).toString("base64")}` },
      ];
      for (const [method, path, body] of ADMIN_ROUTES) {
        for (const headers of carriers) {
          const res = await call(method, path, body, headers);
          expect(res.status, `${method} ${path} ${JSON.stringify(Object.keys(headers))}`).toBe(401);
          expect(res.body).toEqual({ code: "unauthenticated", message: "Missing or invalid admin key.", data: null });
        }
      }
    });

    it("sets a user's credit line in snake_case, shows it, and refuses a negative one", async () => {
      const created = await gw.admin("POST", "/users", { name: "credit", credit_line: 5_000 });
      expect(created.status).toBe(200);
      expect(created.body.data).toMatchObject({ quota: 0, credit_line: 5_000 });
      const id = created.body.data.id;
      const patched = await gw.admin("PATCH", `/users/${id}`, { credit_line: 7_000 });
      expect(patched.body.data.credit_line).toBe(7_000);
      expect((await gw.admin("GET", `/users/${id}`)).body.data.credit_line).toBe(7_000);
      for (const bad of [-1, 1.5, "100", 1e300]) {
        const res = await gw.admin("PATCH", `/users/${id}`, { credit_line: bad });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain("credit_line");
      }
      // A charge may take the balance down to minus the line, and no further.
      const token = await gw.admin("POST", `/users/${id}/tokens`, { name: "t" });
      const ledger = gw.gateway.ctx.ledger;
      await ledger.charge({ userId: id, tokenId: token.body.data.id, amount: 7_000, reference: "image:credit-1" });
      expect(await gw.balance(id)).toBe(-7_000);
      await expect(
        ledger.charge({ userId: id, tokenId: token.body.data.id, amount: 1, reference: "image:credit-2" }),
      ).rejects.toMatchObject({ code: "insufficient_quota" });
      expect(await gw.balance(id)).toBe(-7_000);
    });

    it("accepts the admin key as Bearer and as x-admin-key", async () => {
      expect((await call("GET", "/users", undefined, { authorization: `Bearer ${gw.adminKey}` })).status).toBe(200);
      expect((await call("GET", "/users", undefined, { "x-admin-key": gw.adminKey })).status).toBe(200);
    });

    it("shows a token's key once, stores only its hash, and never lists it", async () => {
      const { userId, key } = await gw.createUser();
      expect(key).toMatch(/^sk-[0-9A-Za-z]{48}$/);
      const listed = await gw.admin("GET", `/users/${userId}/tokens`);
      expect(JSON.stringify(listed.body)).not.toContain(key);
      expect(listed.body.data[0]).not.toHaveProperty("key");
      const db = gw.gateway.ctx.store.db;
      for (const table of ["tokens", "users", "ledger", "settings"] as const) {
        const rows = await db.selectFrom(table).selectAll().execute();
        expect(JSON.stringify(rows), table).not.toContain(key);
        expect(JSON.stringify(rows), table).not.toContain(key.slice(3));
      }
    });

    it("never returns a channel's key", async () => {
      const id = await gw.createChannel({
        type: "gemini",
        baseUrl: "http://127.0.0.1:9",
        key: "secret-channel-key-123",
        models: ["m"],
      });
      const one = await gw.admin("GET", `/channels/${id}`);
      const all = await gw.admin("GET", "/channels");
      const patched = await gw.admin("PATCH", `/channels/${id}`, { weight: 3 });
      for (const res of [one, all, patched]) {
        expect(res.status).toBe(200);
        expect(JSON.stringify(res.body)).not.toContain("secret-channel-key-123");
      }
      expect(one.body.data).not.toHaveProperty("key");
      expect(gw.logs.join("\n")).not.toContain("secret-channel-key-123");
    });

    it("tops up idempotently by reference and shows every ledger row", async () => {
      const { userId } = await gw.createUser({ quota: 10 });
      const a = await gw.admin("POST", `/users/${userId}/topup`, { amount: 90, reference: "invoice-7" });
      const b = await gw.admin("POST", `/users/${userId}/topup`, { amount: 90, reference: "invoice-7" });
      expect(a.body.data).toMatchObject({ applied: true, quota: 100 });
      expect(b.body.data).toMatchObject({ applied: false, quota: 100 });
      const ledger = await gw.admin("GET", `/users/${userId}/ledger`);
      expect(ledger.body.data.map((r: { kind: string; amount: number }) => [r.kind, r.amount])).toEqual([
        ["topup", 90],
        ["topup", 10],
      ]);
    });

    it("keeps top-up references per user: another user's equal reference is applied, a repeat is not", async () => {
      const a = await gw.createUser({ quota: 10 });
      const b = await gw.createUser({ quota: 10 });
      const first = await gw.admin("POST", `/users/${a.userId}/topup`, { amount: 50, reference: "pay-shared-1" });
      const other = await gw.admin("POST", `/users/${b.userId}/topup`, { amount: 70, reference: "pay-shared-1" });
      const repeat = await gw.admin("POST", `/users/${b.userId}/topup`, { amount: 70, reference: "pay-shared-1" });
      expect(first.body.data).toMatchObject({ applied: true, reference: "pay-shared-1", quota: 60 });
      expect(other.body.data).toMatchObject({ applied: true, reference: "pay-shared-1", quota: 80 });
      expect(repeat.body.data).toMatchObject({ applied: false, reference: "pay-shared-1", quota: 80 });
      expect(await gw.balance(a.userId)).toBe(60);
      expect(await gw.balance(b.userId)).toBe(80);
      // The ledger lists the reference as the operator gave it.
      const rows = (await gw.admin("GET", `/users/${b.userId}/ledger`)).body.data;
      expect(rows.filter((r: { reference: string }) => r.reference === "pay-shared-1")).toHaveLength(1);
      expect(await gw.gateway.ctx.ledger.ledgerSum(b.userId)).toBe(80);
    });

    it("edits prices and group ratios at run time", async () => {
      const put = await gw.admin("PUT", "/prices", { kind: "image", name: "image-model", price: 0.5 });
      expect(put.status).toBe(200);
      expect(await gw.gateway.ctx.prices.imagePrice("image-model")).toBe(0.5);
      await gw.admin("PUT", "/group-ratios/vip", { ratio: 0.8 });
      expect(await gw.gateway.ctx.prices.groupRatio("vip")).toBe(0.8);
      const ratios = await gw.admin("GET", "/group-ratios");
      expect(ratios.body.data).toContainEqual({ group: "vip", ratio: 0.8 });
    });

    it("answers bad input with a 4xx envelope naming the problem, never a 500", async () => {
      const auth = { authorization: `Bearer ${gw.adminKey}` };
      const raw = async (method: string, path: string, body: string | Buffer, headers: Record<string, string>) => {
        const res = await fetch(`${gw.url}/api/admin${path}`, {
          method,
          headers: { ...auth, ...headers },
          body: method === "GET" ? undefined : body,
        });
        return { status: res.status, body: (await res.json()) as { message: string; data: unknown } };
      };
      const json = { "content-type": "application/json" };
      const cases: [number, Awaited<ReturnType<typeof raw>>, RegExp][] = [
        [400, await raw("POST", "/users", "{not json", json), /not valid JSON/],
        [400, await raw("POST", "/users", "", json), /not valid JSON|empty/i],
        [400, await raw("POST", "/users", JSON.stringify({ name: 7 }), json), /body\.name/],
        [
          400,
          await raw("POST", "/users", JSON.stringify({ name: "a", admin: true }), json),
          /body\.admin is not a known field/,
        ],
        [400, await raw("POST", "/users/1/topup", JSON.stringify({ amount: -5 }), json), /body\.amount/],
        [400, await raw("POST", "/users/1/topup", JSON.stringify({ amount: "5" }), json), /body\.amount/],
        [
          400,
          await raw("POST", "/users/1/tokens", JSON.stringify({ name: "t", ip_allow: ["300.1.1.1"] }), json),
          /ip_allow/,
        ],
        [400, await raw("GET", "/users/abc", "", {}), /params\.id/],
        [415, await raw("POST", "/users", "name=x", { "content-type": "application/x-www-form-urlencoded" }), /json/i],
        [413, await raw("POST", "/users", Buffer.alloc(70 * 1024 * 1024, 32), json), /too large/],
        [404, await raw("GET", "/users/999999", "", {}), /No user/],
        [404, await raw("GET", "/nothing-here", "", {}), /No route/],
      ];
      for (const [status, res, message] of cases) {
        expect(res.status, JSON.stringify(res.body)).toBe(status);
        expect(res.body.data).toBeNull();
        expect(res.body.message).toMatch(message);
      }
    });
  });
}
