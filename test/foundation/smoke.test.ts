import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`gateway start-up [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("answers /healthz and /readyz with the store it runs on", async () => {
      expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: "ok" });
      const ready = await (await fetch(`${gw.url}/readyz`)).json();
      expect(ready).toEqual({ status: "ok", store: "ok", dialect: kind });
    });

    it("creates a user whose balance is the initial top-up", async () => {
      const { userId } = await gw.createUser({ quota: 1234 });
      expect(await gw.balance(userId)).toBe(1234);
      expect(await gw.gateway.ctx.ledger.ledgerSum(userId)).toBe(1234);
    });
  });
}
