import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ConsoleClient, createConsoleUser, createOperator, PASSWORD, TEST_PASSWORD_COST } from "./console-client.js";

/** Console sign-in, sessions, CSRF, invites and self sign-up, over HTTP on a real gateway (SQLite). */
describe("console accounts and sessions", () => {
  let gw: TestGateway;
  let addressCount = 0;
  /** Invite tokens handed out, which the log must never show. */
  const inviteTokens: string[] = [];
  /** Each client comes from its own address, so per-address slowing stays within its test. */
  const client = () => new ConsoleClient(gw.url, `10.1.0.${++addressCount}`);
  const setSession = (values: { expires_at?: number; last_seen_at?: number }) =>
    gw.gateway.ctx.store.db.updateTable("console_sessions").set(values).execute();

  beforeAll(async () => {
    gw = await startTestGateway("sqlite", {
      logLevel: "info",
      trustProxy: "127.0.0.1",
      console: { passwordCost: TEST_PASSWORD_COST, loginFailuresPerAccount: 3, loginFailuresPerAddress: 6 },
    });
    await createOperator(gw, "root");
    await createConsoleUser(gw, "alice", { email: "Alice@Example.com" });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("signs an operator in with a signed, HttpOnly, SameSite=Strict cookie and answers the session", async () => {
    const c = client();
    const login = await c.login("root");
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ role: "operator", name: "root", email: null });
    expect(login.body.csrfToken).toMatch(/^[\w-]{20,}$/);
    const cookie = login.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^mg_session=[^;]+\.[^;]+;/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    expect(login.headers.get("cache-control")).toBe("no-store");

    const session = await c.call("GET", "/console/api/session");
    expect(session.status).toBe(200);
    expect(session.body).toEqual(login.body);
  });

  it("marks the cookie Secure when the request came over https", async () => {
    const c = client();
    const login = await c.call(
      "POST",
      "/console/api/login",
      { login: "root", password: PASSWORD },
      { headers: { "x-forwarded-proto": "https" } },
    );
    expect(login.status).toBe(200);
    expect(login.headers.get("set-cookie")).toContain("; Secure");
  });

  it("signs a user in by email (any case) or by name", async () => {
    const byEmail = await client().login("ALICE@example.com");
    expect(byEmail.status).toBe(200);
    expect(byEmail.body).toMatchObject({ role: "user", name: "alice", email: "alice@example.com" });
    expect((await client().login("alice")).body.role).toBe("user");
  });

  it("refuses a wrong password and an unknown name alike: 401 invalid_credentials, no cookie", async () => {
    for (const [login, password] of [
      ["root", "wrong password!"],
      ["nobody-at-all", PASSWORD],
    ] as const) {
      const res = await client().call("POST", "/console/api/login", { login, password });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: { code: "invalid_credentials", message: "The name or the password is wrong." },
      });
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    const missing = await client().call("POST", "/console/api/login", { login: "root" });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "invalid_request", field: "password" });
  });

  it("answers unknown console API paths in its own error shape, never cached", async () => {
    const res = await client().call("GET", "/console/api/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("route_not_found");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("answers 401 without a session and for a cookie with a forged signature", async () => {
    expect((await client().call("GET", "/console/api/session")).status).toBe(401);
    const c = client();
    await c.login("root");
    c.cookie = `${c.cookie?.slice(0, -3)}abc`;
    const forged = await c.call("GET", "/console/api/session");
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("unauthenticated");
  });

  it("refuses every state change made with a session cookie but without the right x-csrf-token (403)", async () => {
    const user = client();
    await user.login("alice");
    const op = client();
    await op.login("root");
    const userRoutes: [string, string, unknown][] = [
      ["POST", "/console/api/me/tokens", { name: "t" }],
      ["DELETE", "/console/api/me/tokens/1", undefined],
      ["PUT", "/console/api/me/webhook", { url: null }],
      ["POST", "/console/api/me/webhook/rotate-secret", undefined],
      ["POST", "/console/api/me/playground-token", undefined],
      ["POST", "/console/api/logout", undefined],
      ["POST", "/console/api/login", { login: "alice", password: PASSWORD }],
    ];
    const operatorRoutes: [string, string, unknown][] = [
      ["POST", "/api/admin/users", { name: "mallory-made" }],
      ["PUT", "/api/admin/console-settings", { self_signup: true }],
      ["POST", "/api/admin/users/1/invite", undefined],
      ["POST", "/api/admin/users/1/topup", { amount: 5 }],
      ["DELETE", "/api/admin/tokens/1", undefined],
    ];
    for (const [c, routes] of [
      [user, userRoutes],
      [op, operatorRoutes],
    ] as const) {
      for (const [method, path, body] of routes) {
        for (const csrf of [null, "not-the-token"]) {
          const res = await c.call(method, path, body, { csrf });
          expect(res.status, `${method} ${path} csrf=${csrf}`).toBe(403);
          expect(JSON.stringify(res.body)).toContain("csrf_failed");
        }
      }
    }
    // A body a cross-site form could send is not even parsed.
    const form = await user.call("POST", "/console/api/me/tokens", undefined, {
      headers: { "content-type": "text/plain" },
    });
    expect(form.status).toBe(415);
    // Nothing was changed, and the same calls with the token pass.
    expect((await gw.admin("GET", "/console-settings")).body.data.self_signup).toBe(false);
    expect((await op.call("PUT", "/api/admin/console-settings", { self_signup: false })).status).toBe(200);
    expect((await user.call("PUT", "/console/api/me/webhook", { url: null })).status).toBe(200);
  });

  it("lets an operator use the admin API with the session cookie, and never a user", async () => {
    const op = client();
    await op.login("root");
    const users = await op.call("GET", "/api/admin/users");
    expect(users.status).toBe(200);
    expect(users.body.data.map((u: { name: string }) => u.name)).toContain("alice");
    const created = await op.call("POST", "/api/admin/users", { name: "made-by-operator" });
    expect(created.status).toBe(200);

    const user = client();
    await user.login("alice");
    for (const path of ["/api/admin/users", "/api/admin/channels", "/api/admin/console-settings"]) {
      const res = await user.call("GET", path);
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe("forbidden");
    }
    expect((await user.call("POST", "/api/admin/users", { name: "x" })).status).toBe(403);
    expect((await client().call("GET", "/api/admin/users")).status).toBe(401);
    // The admin key keeps working.
    expect((await gw.admin("GET", "/users")).status).toBe(200);
  });

  it("keeps operators out of the user API (403)", async () => {
    const op = client();
    await op.login("root");
    for (const path of ["/console/api/me", "/console/api/me/tokens", "/console/api/me/ledger"]) {
      const res = await op.call("GET", path);
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });

  it("replaces the browser's session on a new sign-in", async () => {
    const c = client();
    await c.login("root");
    const first = c.cookie;
    expect((await c.login("alice")).body.role).toBe("user");
    const old = client();
    old.cookie = first;
    expect((await old.call("GET", "/console/api/session")).status).toBe(401);
    expect((await c.call("GET", "/console/api/session")).body.name).toBe("alice");
  });

  it("ends the session on logout: the old cookie no longer works", async () => {
    const c = client();
    await c.login("root");
    const kept = c.cookie;
    const out = await c.call("POST", "/console/api/logout");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^mg_session=; .*Max-Age=0/);
    c.cookie = kept;
    expect((await c.call("GET", "/console/api/session")).status).toBe(401);
    expect((await c.call("GET", "/api/admin/users")).status).toBe(401);
  });

  it("ends a session past its absolute expiry or idle too long", async () => {
    const now = Math.floor(Date.now() / 1000);
    const a = client();
    await a.login("alice");
    await setSession({ expires_at: now - 1 });
    expect((await a.call("GET", "/console/api/session")).status).toBe(401);

    const b = client();
    await b.login("alice");
    await setSession({ last_seen_at: now - 2 * 3600 - 1 });
    expect((await b.call("GET", "/console/api/session")).status).toBe(401);
    const left = await gw.gateway.ctx.store.db.selectFrom("console_sessions").selectAll().execute();
    expect(left).toEqual([]);
  });

  it("ends a disabled account's sessions at once and refuses its sign-in", async () => {
    await createOperator(gw, "leaving");
    const c = client();
    expect((await c.login("leaving")).status).toBe(200);
    await gw.gateway.ctx.console.accounts.setOperatorStatus("leaving", "disabled");
    expect((await c.call("GET", "/api/admin/users")).status).toBe(401);
    expect((await c.call("GET", "/console/api/session")).status).toBe(401);
    expect((await client().login("leaving")).status).toBe(401);

    const userId = await createConsoleUser(gw, "suspended");
    const u = client();
    expect((await u.login("suspended")).status).toBe(200);
    expect((await gw.admin("PATCH", `/users/${userId}`, { status: "disabled" })).status).toBe(200);
    expect((await u.call("GET", "/console/api/me")).status).toBe(401);
    expect((await client().login("suspended")).status).toBe(401);
  });

  it("slows sign-ins per account: 429 with Retry-After, even with the right password", async () => {
    await createConsoleUser(gw, "slowed", { email: "slowed@example.com" });
    for (let i = 0; i < 3; i++) {
      expect(
        (await client().call("POST", "/console/api/login", { login: "slowed", password: "bad password" })).status,
      ).toBe(401);
    }
    const refused = await client().login("slowed");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.body.error.code).toBe("rate_limited");
  });

  it("clears an account's failures on a successful sign-in", async () => {
    await createConsoleUser(gw, "forgetful");
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) {
        await client().call("POST", "/console/api/login", { login: "forgetful", password: "bad password" });
      }
      expect((await client().login("forgetful")).status).toBe(200);
    }
  });

  it("slows sign-ins per address, whatever names it tries", async () => {
    const c = client();
    for (let i = 0; i < 6; i++) {
      expect(
        (await c.call("POST", "/console/api/login", { login: `guess-${i}`, password: "bad password" })).status,
      ).toBe(401);
    }
    const refused = await c.login("root");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    // Another address is not slowed.
    expect((await client().login("root")).status).toBe(200);
  });

  it("lets an invite link set a password once, then never again", async () => {
    const userId = (await gw.admin("POST", "/users", { name: "invited" })).body.data.id;
    const invite = await gw.admin("POST", `/users/${userId}/invite`);
    expect(invite.status).toBe(200);
    expect(invite.body.data.invite_url).toMatch(new RegExp(`^${gw.url}/console/#/invite/[\\w-]{40,}$`));
    expect(invite.body.data.expires_at).toBeGreaterThan(Date.now() / 1000 + 6 * 86400);
    const token = invite.body.data.invite_url.split("/").pop();
    inviteTokens.push(token);

    const c = client();
    expect((await c.call("GET", `/console/api/invites/${token}`)).body).toEqual({ name: "invited", email: null });
    const short = await c.call("POST", `/console/api/invites/${token}/accept`, { password: "short" });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ field: "password" });
    expect(short.body.error.message).toContain("at least 10 characters");

    const accepted = await c.call("POST", `/console/api/invites/${token}/accept`, { password: PASSWORD });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ role: "user", id: userId, name: "invited" });
    expect((await c.call("GET", "/console/api/me")).body.name).toBe("invited");

    const again = client();
    expect(
      (await again.call("POST", `/console/api/invites/${token}/accept`, { password: "another password" })).status,
    ).toBe(404);
    expect((await again.call("GET", `/console/api/invites/${token}`)).status).toBe(404);
    expect(
      (await again.call("POST", "/console/api/login", { login: "invited", password: "another password" })).status,
    ).toBe(401);
    expect((await again.login("invited")).status).toBe(200);
  });

  it("refuses an expired invite (404)", async () => {
    const userId = (await gw.admin("POST", "/users", { name: "late" })).body.data.id;
    const token = (await gw.admin("POST", `/users/${userId}/invite`)).body.data.invite_url.split("/").pop();
    await gw.gateway.ctx.store.db
      .updateTable("console_invites")
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .execute();
    expect((await client().call("GET", `/console/api/invites/${token}`)).status).toBe(404);
    expect((await client().call("POST", `/console/api/invites/${token}/accept`, { password: PASSWORD })).status).toBe(
      404,
    );
    expect((await gw.admin("POST", "/users/999999/invite")).status).toBe(404);
  });

  it("allows self sign-up only while an operator has it on", async () => {
    const visitor = client();
    expect((await visitor.call("GET", "/console/api/signup-settings")).body).toEqual({ selfSignup: false });
    const body = { name: "newcomer", email: "new@example.com", password: PASSWORD };
    const off = await visitor.call("POST", "/console/api/signup", body);
    expect(off.status).toBe(403);
    expect(off.body.error.code).toBe("forbidden");

    const op = client();
    await op.login("root");
    expect((await op.call("PUT", "/api/admin/console-settings", { self_signup: true })).body.data).toEqual({
      self_signup: true,
    });
    expect((await visitor.call("GET", "/console/api/signup-settings")).body).toEqual({ selfSignup: true });
    const on = await visitor.call("POST", "/console/api/signup", body);
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ role: "user", name: "newcomer", email: "new@example.com" });
    expect((await visitor.call("GET", "/console/api/me")).body).toMatchObject({ name: "newcomer", quota: 0 });

    const taken = await client().call("POST", "/console/api/signup", { ...body, name: "other" });
    expect(taken.status).toBe(409);
    expect(taken.body.error.field).toBe("email");
    const weak = await client().call("POST", "/console/api/signup", {
      ...body,
      email: "x@example.com",
      password: "123",
    });
    expect(weak.status).toBe(400);
    expect(weak.body.error.field).toBe("password");
    await op.call("PUT", "/api/admin/console-settings", { self_signup: false });
  });

  it("never writes a password, a session id or a CSRF token to the log", async () => {
    const c = client();
    await c.login("root");
    await c.call("POST", "/console/api/login", { login: "root", password: "a wrong password 123" });
    const sessionId = (c.cookie ?? "").split("=")[1]?.split(".")[0] ?? "";
    expect(sessionId.length).toBeGreaterThan(20);
    const logs = gw.logs.join("\n");
    expect(logs).toContain("CONSOLE_PASSWORD_COST is below 15");
    expect(inviteTokens.length).toBe(1);
    expect(logs).toContain("/console/api/invites/[redacted]/accept");
    for (const secret of [PASSWORD, "a wrong password 123", sessionId, c.csrf as string, ...inviteTokens]) {
      expect(logs).not.toContain(secret);
    }
  });
});
