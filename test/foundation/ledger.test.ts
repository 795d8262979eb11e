import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/core/errors.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`money ledger [${kind}]`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(kind);
    });
    afterAll(async () => {
      await gw?.close();
    });

    const ledger = () => gw.gateway.ctx.ledger;
    const rows = async (userId: number) => ledger().entries(userId, { limit: 10_000 });

    it("refunds one reference exactly once under 50 parallel refunds", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
      await ledger().charge({ userId, tokenId, amount: 300, reference: "task:parallel" });
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger().refund("task:parallel")));
      expect(outcomes.filter((o) => o.applied)).toHaveLength(1);
      const refunds = (await rows(userId)).filter((r) => r.reference === "task:parallel" && r.kind === "refund");
      expect(refunds).toHaveLength(1);
      expect(Number(refunds[0]?.amount)).toBe(300);
      expect(await gw.balance(userId)).toBe(1_000);
    });

    it("settles one reference exactly once under parallel settlements", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
      await ledger().charge({ userId, tokenId, amount: 400, reference: "content:settle" });
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => ledger().settle("content:settle", 150)));
      expect(outcomes.filter((o) => o.applied)).toHaveLength(1);
      expect(await gw.balance(userId)).toBe(850);
    });

    it("changes nothing when a charge exceeds the balance", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 100 });
      const before = await rows(userId);
      await expect(ledger().charge({ userId, tokenId, amount: 101, reference: "image:too-big" })).rejects.toMatchObject(
        { code: "insufficient_quota", status: 403 },
      );
      expect(await gw.balance(userId)).toBe(100);
      expect(await rows(userId)).toEqual(before);
      const user = await gw.gateway.ctx.users.get(userId);
      expect(Number(user?.used_quota)).toBe(0);
    });

    it("enforces a token's quota limit in the same transaction as the charge", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 1_000, token: { quotaLimit: 250 } });
      await ledger().charge({ userId, tokenId, amount: 200, reference: "task:limit-1" });
      const err = await ledger()
        .charge({ userId, tokenId, amount: 60, reference: "task:limit-2" })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe("token_quota_exceeded");
      expect(await gw.balance(userId)).toBe(800);
      // A refund gives the token its room back.
      await ledger().refund("task:limit-1");
      await ledger().charge({ userId, tokenId, amount: 250, reference: "task:limit-3" });
      expect(await gw.balance(userId)).toBe(750);
    });

    it("closes a charge once when a refund and a settlement race", async () => {
      const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
      await ledger().charge({ userId, tokenId, amount: 500, reference: "content:race" });
      const [refund, settle] = await Promise.all([
        ledger().refund("content:race"),
        ledger().settle("content:race", 100),
      ]);
      // The first to close wins; the other changes nothing.
      expect([refund.applied, settle.applied].filter(Boolean)).toHaveLength(1);
      expect(await gw.balance(userId)).toBe(refund.applied ? 1_000 : 900);
      expect(await ledger().ledgerSum(userId)).toBe(await gw.balance(userId));
    });

    it("keeps balance = topups - charges + refunds +/- settles after random operations", async () => {
      const op = fc.oneof(
        fc.record({ t: fc.constant("charge" as const), amount: fc.integer({ min: 0, max: 400 }) }),
        fc.record({ t: fc.constant("refund" as const), pick: fc.nat() }),
        fc.record({ t: fc.constant("settle" as const), pick: fc.nat(), actual: fc.integer({ min: 0, max: 600 }) }),
        fc.record({ t: fc.constant("topup" as const), amount: fc.integer({ min: 1, max: 500 }) }),
      );
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
          run += 1;
          const { userId, tokenId } = await gw.createUser({ quota: 1_000 });
          const refs: string[] = [];
          let expected = 1_000;
          const charged = new Map<string, { net: number; settled: boolean; refunded: boolean }>();
          for (const [i, o] of ops.entries()) {
            if (o.t === "charge") {
              const reference = `rand:${run}:${i}`;
              try {
                await ledger().charge({ userId, tokenId, amount: o.amount, reference });
                refs.push(reference);
                charged.set(reference, { net: o.amount, settled: false, refunded: false });
                expected -= o.amount;
              } catch (err) {
                expect((err as GatewayError).code).toBe("insufficient_quota");
                expect(o.amount).toBeGreaterThan(expected);
              }
            } else if (o.t === "topup") {
              await ledger().topUp(userId, o.amount, `rand-topup:${run}:${i}`);
              expected += o.amount;
            } else if (refs.length > 0) {
              const reference = refs[o.pick % refs.length] as string;
              const state = charged.get(reference)!;
              // A charge closes once: settled or refunded, never both.
              const open = !state.settled && !state.refunded;
              if (o.t === "refund") {
                const r = await ledger().refund(reference);
                expect(r.applied).toBe(open);
                if (open) {
                  expected += state.net;
                  state.refunded = true;
                  state.net = 0;
                }
              } else {
                const s = await ledger().settle(reference, o.actual);
                expect(s.applied).toBe(open);
                if (open) {
                  // Above the hold, no more than the balance has (credit line 0) is taken.
                  const excess = Math.max(0, o.actual - state.net);
                  const collected = Math.min(excess, Math.max(0, expected));
                  expect(s.uncollected).toBe(excess - collected);
                  expected += Math.max(0, state.net - o.actual) - collected;
                  state.net = Math.min(o.actual, state.net + collected);
                  state.settled = true;
                }
              }
              expect(await gw.balance(userId)).toBeGreaterThanOrEqual(0);
            }
          }
          expect(await gw.balance(userId)).toBe(expected);
          expect(await ledger().ledgerSum(userId)).toBe(expected);
        }),
        { numRuns: kind === "postgres" ? 15 : 30 },
      );
    });
  });
}
