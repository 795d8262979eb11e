import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Charges } from "../../src/store/charges.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { clientOf, eventually, ledgerRowsOf, startVideoEnv, type VideoEnv } from "./harness.js";

/** The quota of a 4-second sora-2 video at the default price (0.1 per second). */
function holdOf(env: VideoEnv): number {
  return Math.round(0.1 * 4 * env.gw.gateway.ctx.config.quotaPerUnit);
}

async function taskRow(env: VideoEnv, videoId: string) {
  return env.gw.gateway.ctx.store.db
    .selectFrom("tasks")
    .selectAll()
    .where("task_id", "=", videoId)
    .executeTakeFirstOrThrow();
}

/** The upstream's videos of these prompts it reports as made (what it bills the operator for). */
function billedUpstream(env: VideoEnv, prompts: string[]): number {
  return env.sim.usage.records.filter(
    (r) => r.protocol === "openai-videos" && prompts.includes(r.prompt) && r.task?.ends === "success",
  ).length;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`deleting a video the upstream is still making [${kind}]`, () => {
    let env: VideoEnv;
    beforeAll(async () => {
      // Three retrieves to complete; the timeout is far away, so only the upstream ends a video.
      env = await startVideoEnv(kind, {
        sim: { videos: { stepsToComplete: 3 } },
        config: { tasks: { timeoutSeconds: 120 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("keeps the charge held while the upstream job runs, polls it on, and settles it when the upstream completes it", async () => {
      const { gw } = env;
      const hold = holdOf(env);
      const user = await gw.createUser({ quota: hold });
      const client = clientOf(gw, user.key);
      // Its first four retrieves fail: it is still running upstream when the delete lands.
      const prompt = "deleted while running [poll500=4]";
      const created = await client.videos.create({ prompt, seconds: "4" });
      const deleted = await client.videos.delete(created.id);
      expect(deleted).toMatchObject({ id: created.id, object: "video.deleted", deleted: true });
      await expect(client.videos.retrieve(created.id)).rejects.toMatchObject({ status: 404 });

      // Hidden from the user, but the charge is open and the balance stays charged.
      const charges = new Charges(gw.gateway.ctx.store.db, gw.gateway.ctx.store.dialect);
      expect((await charges.find(`task:${created.id}`))?.state).toBe("open");
      expect(await gw.balance(user.userId)).toBe(0);
      expect(await ledgerRowsOf(gw, user.userId, created.id)).toEqual([{ kind: "charge", amount: -hold }]);
      expect((await taskRow(env, created.id)).status).not.toBe("FAILURE");
      // The answer tells the user so.
      expect((deleted as unknown as { charge: unknown }).charge).toMatchObject({ state: "open", quota: hold });
      expect((deleted as unknown as { charge: { message: string } }).charge.message).toContain("cannot cancel");

      // The upstream runs it to its end; the gateway polls it there and settles what it billed.
      const row = await eventually(async () => {
        const r = await taskRow(env, created.id);
        return r.status === "SUCCESS" ? r : null;
      });
      const upstreamId = row.upstream_id as string;
      const retrieves = env.sim.received.filter((r) => r.method === "GET" && r.path === `/v1/videos/${upstreamId}`);
      expect(retrieves.length).toBeGreaterThanOrEqual(3);
      expect(await ledgerRowsOf(gw, user.userId, created.id)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -hold },
      ]);
      expect((await charges.find(`task:${created.id}`))?.state).toBe("settled");
      expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(0);
      expect(billedUpstream(env, [prompt])).toBe(1);
      // Nothing of a deleted video is kept: no files copied, no result shown.
      expect(env.sim.received.some((r) => r.path.startsWith(`/v1/videos/${upstreamId}/content`))).toBe(false);
      expect(row.data).toBe("{}");
      expect(row.result_url).toBeNull();
      await expect(client.videos.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    });

    it("refunds a deleted video once the upstream fails it", async () => {
      const { gw } = env;
      const hold = holdOf(env);
      const user = await gw.createUser({ quota: hold });
      const client = clientOf(gw, user.key);
      const created = await client.videos.create({ prompt: "deleted, then fails [poll500=4] [fail]", seconds: "4" });
      const deleted = await client.videos.delete(created.id);
      expect(await gw.balance(user.userId)).toBe(0);
      expect((deleted as unknown as { charge: { state: string } }).charge.state).toBe("open");
      await eventually(async () => (await taskRow(env, created.id)).status === "FAILURE");
      expect(await ledgerRowsOf(gw, user.userId, created.id)).toEqual([
        { kind: "refund", amount: hold },
        { kind: "charge", amount: -hold },
      ]);
      expect(await gw.balance(user.userId)).toBe(hold);
    });

    it("lets no loop of create and delete start more videos than the balance pays for", async () => {
      const { gw } = env;
      const hold = holdOf(env);
      const user = await gw.createUser({ quota: hold });
      const client = clientOf(gw, user.key);
      const upstreamCreates = () => env.sim.received.filter((r) => r.method === "POST" && r.path === "/v1/videos");
      const before = upstreamCreates().length;
      const prompts: string[] = [];
      const refused: number[] = [];
      const answers: unknown[] = [];
      for (let round = 0; round < 6; round++) {
        const prompt = `loop ${round} [poll500=4]`;
        prompts.push(prompt);
        const created = await client.videos.create({ prompt, seconds: "4" }).catch((err: { status: number }) => {
          refused.push(err.status);
          return null;
        });
        if (created) answers.push(await client.videos.delete(created.id));
      }
      // The first create took the whole balance; while its charge is open every other is refused.
      expect(refused).toEqual([403, 403, 403, 403, 403]);
      expect(upstreamCreates().length - before).toBe(1);
      expect(answers.map((a) => (a as { charge?: { state: string } }).charge?.state)).toEqual(["open"]);
      await eventually(async () =>
        (await gw.gateway.ctx.ledger.entries(user.userId, { limit: 100 })).some((e) => e.kind === "settle"),
      );
      // What the upstream bills the operator for is what the user paid.
      const paid = hold - (await gw.balance(user.userId));
      expect(paid).toBe(hold);
      expect(billedUpstream(env, prompts) * hold).toBeLessThanOrEqual(paid);
      await expect(client.videos.create({ prompt: "after the loop", seconds: "4" })).rejects.toMatchObject({
        status: 403,
      });
    });

    it("says a completed video's charge stands and a failed one's was refunded", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const done = await client.videos.create({ prompt: "completes first" });
      const failed = await client.videos.create({ prompt: "fails first [fail]" });
      for (const id of [done.id, failed.id]) {
        await eventually(async () => {
          const v = await client.videos.retrieve(id);
          return v.status === "completed" || v.status === "failed";
        });
      }
      const charges = await Promise.all([done.id, failed.id].map((id) => client.videos.delete(id)));
      expect(charges.map((c) => (c as unknown as { charge: { state: string } }).charge.state)).toEqual([
        "settled",
        "refunded",
      ]);
    });
  });
}
