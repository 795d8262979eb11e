import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ledgerRowsOf, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

/** The further actions of audiob, each with a body, and its quota at the default price. */
const ACTIONS = (clipId: string): [string, Record<string, unknown>, number][] => [
  ["LYRICS", { prompt: "a rainy morning" }, 2_500],
  ["EXTEND", { clip_id: clipId, continue_at: 30 }, 50_000],
  ["COVER", { clip_id: clipId, prompt: "as a march" }, 50_000],
  ["ADD_INSTRUMENTAL", { clip_id: clipId }, 50_000],
  ["ADD_VOCALS", { clip_id: clipId, prompt: "oh oh" }, 50_000],
  ["STEMS", { clip_id: clipId, kind: "all" }, 10_000],
  ["WAV", { clip_id: clipId }, 5_000],
  ["MUSIC_VIDEO", { clip_id: clipId }, 10_000],
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`audiob actions that fail [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: {
          generateRecord: {
            completeAfterMs: 150,
            failActions: ACTIONS("").map(([action]) => action),
          },
        },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("refunds every action exactly once when the upstream task fails", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const music = await submit(gw.url, user.key, "audiob", "MUSIC", { prompt: "the source" });
      const song = await waitForTask(gw.url, user.key, "audiob", music.body.data);
      expect(song.status).toBe("SUCCESS");
      const before = await gw.balance(user.userId);
      const submitted = [];
      for (const [action, body, quota] of ACTIONS(song.data.clips[0].clip_id)) {
        const sub = await submit(gw.url, user.key, "audiob", action, body);
        expect(sub.status, `${action}: ${JSON.stringify(sub.body)}`).toBe(200);
        submitted.push({ action, quota, taskId: sub.body.data as string });
      }
      for (const { action, quota, taskId } of submitted) {
        const record = await waitForTask(gw.url, user.key, "audiob", taskId);
        expect(record.status, action).toBe("FAILURE");
        expect(record.fail_reason, action).toBe("simulated failure");
        expect(record.quota).toBe(quota);
        const rows = await ledgerRowsOf(gw, user.userId, taskId);
        expect(rows, action).toEqual(
          expect.arrayContaining([
            { kind: "charge", amount: -quota },
            { kind: "refund", amount: quota },
          ]),
        );
        expect(rows.length, action).toBe(2);
      }
      expect(await gw.balance(user.userId)).toBe(before);
    });

    it("VOCALS_SWAP with only generate-record channels: no channel, nothing charged or sent", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const music = await submit(gw.url, user.key, "audiob", "MUSIC", { prompt: "to swap" });
      const song = await waitForTask(gw.url, user.key, "audiob", music.body.data);
      const balance = await gw.balance(user.userId);
      const before = sim.received.length;
      const res = await submit(gw.url, user.key, "audiob", "VOCALS_SWAP", {
        clip_id: song.data.clips[0].clip_id,
        prompt: "a choir",
      });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: "no_channel_available", data: null });
      expect(await gw.balance(user.userId)).toBe(balance);
      expect(sim.received.length).toBe(before);
    });
  });
}
