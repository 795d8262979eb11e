import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/core/errors.js";
import {
  IdempotencyKeys,
  type IdempotencySettings,
  type IdempotentRun,
  type StoredAnswer,
} from "../../src/idempotency/idempotency-keys.js";
import { IdempotencyKeyRows } from "../../src/store/idempotency-keys.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

/** A promise and the means to settle it from outside. */
function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`Idempotency-Key lease [${kind}]`, () => {
    let gw: TestGateway;
    let tokenId: number;
    // The clock every instance below reads; tests move it instead of waiting.
    let now = Date.now();
    const settings = (owner: string, more: Partial<IdempotencySettings> = {}): IdempotencySettings => ({
      retentionSeconds: 3600,
      waitMs: 0,
      leaseMs: 1000,
      // By default an instance never renews: it behaves like one that died after it started.
      renewEveryMs: 3_600_000,
      owner,
      now: () => now,
      ...more,
    });
    const keysOf = (owner: string, more: Partial<IdempotencySettings> = {}) =>
      new IdempotencyKeys(new IdempotencyKeyRows(gw.gateway.ctx.store.db), settings(owner, more));
    const leaseRow = (key: string) =>
      gw.gateway.ctx.store.db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("token_id", "=", tokenId)
        .where("key", "=", key)
        .executeTakeFirstOrThrow();

    beforeAll(async () => {
      gw = await startTestGateway(kind);
      tokenId = (await gw.createUser()).tokenId;
    });
    afterAll(async () => {
      await gw?.close();
    });

    /** Starts a run on `keys` whose work does not end until `finish` is called. */
    async function startHanging(keys: IdempotencyKeys, scope: { tokenId: number; key: string; fingerprint: string }) {
      const started = deferred<IdempotentRun>();
      const answer = deferred<StoredAnswer>();
      const result = keys.run(scope, (run) => {
        started.resolve(run);
        return answer.promise;
      });
      return { run: await started.promise, finish: answer.resolve, result };
    }

    it("takes over a key whose owner stopped renewing once the lease runs out, as the next attempt of the same run", async () => {
      const scope = { tokenId, key: randomUUID(), fingerprint: "f1" };
      const dead = await startHanging(keysOf("dead"), scope);
      expect(dead.run.attempt).toBe(1);
      expect(await leaseRow(scope.key)).toMatchObject({ owner: "dead", status: "in_progress", attempts: 1 });

      // Within the lease a retry waits (here: not at all) and is told the first still runs.
      const early = await keysOf("retry")
        .run(scope, async () => ({ status: 200, body: "must not run" }))
        .catch((e: unknown) => e);
      expect(early).toBeInstanceOf(GatewayError);
      expect((early as GatewayError).errorName).toBe("GW_ERR_IDEMPOTENCY_IN_PROGRESS");

      now += 1001;
      const runs: IdempotentRun[] = [];
      const retried = await keysOf("retry").run(scope, async (run) => {
        runs.push(run);
        return { status: 200, body: { from: "retry" } };
      });
      expect(retried).toEqual({ status: 200, body: { from: "retry" }, replayed: false });
      expect(runs).toEqual([{ runId: dead.run.runId, attempt: 2 }]);

      // The old attempt answers late (a stalled, not dead, instance): its answer is not kept.
      dead.finish({ status: 200, body: { from: "dead" } });
      expect((await dead.result).body).toEqual({ from: "dead" });
      const replay = await keysOf("third").run(scope, async () => ({ status: 200, body: "must not run" }));
      expect(replay).toEqual({ status: 200, body: { from: "retry" }, replayed: true });
    });

    it("lets exactly one of several simultaneous retries take an abandoned key over", async () => {
      const scope = { tokenId, key: randomUUID(), fingerprint: "f2" };
      await startHanging(keysOf("dead"), scope);
      now += 1001;
      let produced = 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          keysOf(`retry-${i}`, { waitMs: 10_000 }).run(scope, async () => {
            produced += 1;
            await new Promise((r) => setTimeout(r, 30));
            return { status: 200, body: { n: produced } };
          }),
        ),
      );
      expect(produced).toBe(1);
      expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
      for (const a of answers) expect(a.body).toEqual({ n: 1 });
      expect(await leaseRow(scope.key)).toMatchObject({ status: "done", attempts: 2 });
    });

    it("renews the lease while the request runs, so a retry never takes over a live request", async () => {
      const scope = { tokenId, key: randomUUID(), fingerprint: "f3" };
      const live = await startHanging(keysOf("live", { renewEveryMs: 10 }), scope);
      const first = Number((await leaseRow(scope.key)).locked_until);
      // Far past the first lease: only a renewal keeps the key.
      now += 5000;
      for (let i = 0; i < 200 && Number((await leaseRow(scope.key)).locked_until) < now; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(Number((await leaseRow(scope.key)).locked_until)).toBeGreaterThan(first + 4000);
      const retry = await keysOf("retry")
        .run(scope, async () => ({ status: 200, body: "must not run" }))
        .catch((e: unknown) => e);
      expect((retry as GatewayError).errorName).toBe("GW_ERR_IDEMPOTENCY_IN_PROGRESS");
      live.finish({ status: 200, body: { from: "live" } });
      await live.result;
      expect(await leaseRow(scope.key)).toMatchObject({ status: "done", owner: "live", attempts: 1 });
    });
  });
}
