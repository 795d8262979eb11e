import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { eventually, ledgerRowsOf, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

const SOME_UUID = "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11";
const EDIT_PRICE = 30_000; // 0.06 x 500000

async function succeededClip(env: TaskEnv, key: string): Promise<string> {
  const sub = await submit(env.gw.url, key, "audioa", "MUSIC", { prompt: "source song" });
  const record = await waitForTask(env.gw.url, key, "audioa", sub.body.data);
  expect(record.status).toBe("SUCCESS");
  return record.data.clips[0].clip_id;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`REPLACE and INSTRUMENTALS_SWAP closed by default [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, { sim: { taskRelay: { completeAfterMs: 200 } } });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("answers 403 action_unavailable without charging or calling the upstream", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const before = sim.received.length;
      const replace = await submit(gw.url, user.key, "audioa", "REPLACE", {
        clip_id: SOME_UUID,
        starts: 1,
        ends: 5,
        sound_prompt: "guitar",
      });
      expect(replace.status).toBe(403);
      expect(replace.body).toEqual({
        code: "action_unavailable",
        message: "The action REPLACE is currently unavailable.",
        data: null,
      });
      const swap = await submit(gw.url, user.key, "audioa", "INSTRUMENTALS_SWAP", {
        clip_id: SOME_UUID,
        sound_prompt: "jazz",
      });
      expect(swap.status).toBe(403);
      expect(swap.body.code).toBe("action_unavailable");
      expect(swap.body.message).toContain("currently unavailable");
      expect(sim.received.length).toBe(before);
      expect(await gw.balance(user.userId)).toBe(1_000_000);
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`REPLACE and INSTRUMENTALS_SWAP reopened [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 200 } },
        config: { tasks: { enabledActions: ["REPLACE", "INSTRUMENTALS_SWAP"] } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("runs REPLACE on the caller's own clip through the pipeline at its price", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, user.key);
      const sub = await submit(gw.url, user.key, "audioa", "REPLACE", {
        clip_id: clipId,
        starts: 10.5,
        ends: 20,
        sound_prompt: "a soft piano",
      });
      expect(sub.status).toBe(200);
      expect(sub.body.message).toBe("task submitted successfully");
      // The send follows the answer.
      const sent = await eventually(async () => sim.received.find((r) => r.path.endsWith("/submit/REPLACE")));
      expect(sent?.path).toBe("/audioa/submit/REPLACE");
      expect(sent?.body).toEqual({ clip_id: clipId, starts: 10.5, ends: 20, sound_prompt: "a soft piano" });
      const record = await waitForTask(gw.url, user.key, "audioa", sub.body.data);
      expect(record.status).toBe("SUCCESS");
      expect(record.action).toBe("REPLACE");
      expect(record.quota).toBe(EDIT_PRICE);
      expect(record.data.quota).toBe(String(EDIT_PRICE));
      expect(record.properties.input).toBe("a soft piano");
      expect(record.properties.origin_model_name).toBe("chirp-v3-5");
      expect(await ledgerRowsOf(gw, user.userId, sub.body.data)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -EDIT_PRICE },
      ]);
    });

    it("runs INSTRUMENTALS_SWAP on the caller's own clip", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, user.key);
      const sub = await submit(gw.url, user.key, "audioa", "INSTRUMENTALS_SWAP", {
        clip_id: clipId,
        sound_prompt: "bossa nova",
        cover_strength: 0.4,
      });
      expect(sub.status).toBe(200);
      const record = await waitForTask(gw.url, user.key, "audioa", sub.body.data);
      expect(record.status).toBe("SUCCESS");
      expect(record.action).toBe("INSTRUMENTALS_SWAP");
      expect(record.quota).toBe(EDIT_PRICE);
    });

    it("refuses a clip the caller does not own, and bodies out of bounds, without charging", async () => {
      const { gw } = env;
      const owner = await gw.createUser({ quota: 1_000_000 });
      const other = await gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, owner.key);
      const foreign = await submit(gw.url, other.key, "audioa", "REPLACE", {
        clip_id: clipId,
        starts: 0,
        sound_prompt: "x",
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body.message).toContain("body.clip_id");
      const bad: [string, unknown, string][] = [
        ["REPLACE", { clip_id: clipId, starts: 5, ends: 5, sound_prompt: "x" }, "body.ends"],
        ["REPLACE", { clip_id: clipId, starts: -1, sound_prompt: "x" }, "body.starts"],
        ["REPLACE", { clip_id: "nope", starts: 1, sound_prompt: "x" }, "body.clip_id"],
        ["REPLACE", { clip_id: clipId, starts: 1 }, "body.sound_prompt"],
        ["INSTRUMENTALS_SWAP", { clip_id: clipId, sound_prompt: "x", cover_strength: 1.5 }, "body.cover_strength"],
      ];
      for (const [action, body, field] of bad) {
        const res = await submit(gw.url, other.key, "audioa", action, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.message).toContain(field);
      }
      expect(await gw.balance(other.userId)).toBe(1_000_000);
    });
  });
}
