import { describe, expect, it } from "vitest";
import { startTestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ConsoleClient, createOperator, TEST_PASSWORD_COST } from "./console-client.js";

const settings = { console: { passwordCost: TEST_PASSWORD_COST } };

describe("the session cookie's signing secret", () => {
  it("is generated once and kept in the store: a session outlives a restart", async () => {
    const first = await startTestGateway("sqlite", settings, { keepStore: true });
    await createOperator(first, "ops");
    const c = new ConsoleClient(first.url);
    expect((await c.login("ops")).status).toBe(200);
    await first.close();
    const second = await startTestGateway("sqlite", settings, {
      databaseUrl: `sqlite:${first.dataDir}/gateway.sqlite`,
      dataDir: first.dataDir,
    });
    try {
      const again = new ConsoleClient(second.url);
      again.cookie = c.cookie;
      expect((await again.call("GET", "/console/api/session")).body).toMatchObject({ role: "operator", name: "ops" });
    } finally {
      await second.close();
      await first.dropStore();
    }
  });

  it.skipIf(!HAS_PG)("signs alike on every instance of a store, and CONSOLE_COOKIE_SECRET replaces it", async () => {
    const a = await startTestGateway("postgres", settings, { keepStore: true });
    const url = String(a.gateway.ctx.config.databaseUrl);
    const b = await startTestGateway("postgres", settings, { databaseUrl: url });
    const own = await startTestGateway(
      "postgres",
      { console: { ...settings.console, cookieSecret: "a-configured-secret-0123456789" } },
      { databaseUrl: url },
    );
    try {
      await createOperator(a, "ops");
      const onA = new ConsoleClient(a.url);
      expect((await onA.login("ops")).status).toBe(200);
      const onB = new ConsoleClient(b.url);
      onB.cookie = onA.cookie;
      expect((await onB.call("GET", "/api/admin/users")).status).toBe(200);
      const onOwn = new ConsoleClient(own.url);
      onOwn.cookie = onA.cookie;
      expect((await onOwn.call("GET", "/console/api/session")).status).toBe(401);
      expect((await onOwn.login("ops")).status).toBe(200);
      expect(onOwn.cookie).not.toBe(onA.cookie);
    } finally {
      await own.close();
      await b.close();
      await a.close();
      await a.dropStore();
    }
  });
});
