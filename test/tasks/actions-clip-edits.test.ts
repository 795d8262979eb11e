import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { expectRefunded, expectSettled, runAction, sentUpstream, succeededClip } from "./actions-harness.js";
import { startTaskEnv, submit, type TaskEnv } from "./harness.js";

const SOME_UUID = "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11";

/** Each action that makes a new song from a clip, with a body that names `clipId`. */
const EDITS: [string, (clipId: string) => Record<string, unknown>][] = [
  [
    "EXTEND",
    (clipId) => ({
      clip_id: clipId,
      continue_at: 95.5,
      prompt: "[Bridge]\nthe road goes on",
      tags: "rock",
      mv: "chirp-v4",
    }),
  ],
  ["COVER", (clipId) => ({ clip_id: clipId, prompt: "as a bossa nova", title: "Cover", cover_strength: 0.35 })],
  ["ADD_INSTRUMENTAL", (clipId) => ({ clip_id: clipId, tags: "strings, piano", title: "With band" })],
  ["ADD_VOCALS", (clipId) => ({ clip_id: clipId, prompt: "[Verse]\nla la la", tags: "soul" })],
  ["VOCALS_SWAP", (clipId) => ({ clip_id: clipId, prompt: "a deep baritone" })],
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`EXTEND, COVER and the vocal layers on audioa [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, { sim: { taskRelay: { completeAfterMs: 200 } } });
    });
    afterAll(async () => {
      await env?.close();
    });

    for (const [action, bodyOf] of EDITS) {
      it(`runs ${action} on the caller's own clip: sent as given, charged, new clips with audio`, async () => {
        const user = await env.gw.createUser({ quota: 1_000_000 });
        const clipId = await succeededClip(env, user.key);
        const body = bodyOf(clipId);
        const before = env.sim.received.length;
        const { taskId, record } = await runAction(env, user.key, action, body);
        const sent = await sentUpstream(env, action, before);
        expect(sent?.path).toBe(`/audioa/submit/${action}`);
        // The same shape, so gateways chain; the model (when the kind carries one) is the mapped one.
        const model = action === "EXTEND" || action === "COVER" ? { mv: (body.mv as string) ?? "chirp-v3-5" } : {};
        expect(sent?.body).toEqual({ ...body, ...model });
        expect(record.status).toBe("SUCCESS");
        expect(record.action).toBe(action);
        expect(record.properties.input).toBe((body.prompt as string) ?? "");
        expect(record.properties.origin_model_name).toBe((body.mv as string) ?? "chirp-v3-5");
        expect(record.data.clips.length).toBeGreaterThan(0);
        for (const clip of record.data.clips) {
          expect(clip.clip_id).not.toBe(clipId);
          expect(clip.audio_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/audioa\/files\/\w+\.mp3$/);
        }
        expect(record.result_url).toBe(record.data.clips[0].audio_url);
        await expectSettled(env, user.userId, taskId, action);
      });
    }

    it("refunds an EXTEND the upstream fails, once", async () => {
      const user = await env.gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, user.key);
      const balance = await env.gw.balance(user.userId);
      const { taskId, record } = await runAction(env, user.key, "EXTEND", {
        clip_id: clipId,
        continue_at: 30,
        prompt: "more [fail]",
      });
      expect(record.status).toBe("FAILURE");
      expect(record.fail_reason).toBe("simulated failure");
      await expectRefunded(env, user.userId, taskId, "EXTEND");
      expect(await env.gw.balance(user.userId)).toBe(balance);
    });

    it("answers 404 for another user's clip or an unknown one, charging nothing and calling no upstream", async () => {
      const owner = await env.gw.createUser({ quota: 1_000_000 });
      const other = await env.gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, owner.key);
      const before = env.sim.received.length;
      for (const [action, bodyOf] of EDITS) {
        for (const id of [clipId, SOME_UUID]) {
          const res = await submit(env.gw.url, other.key, "audioa", action, bodyOf(id));
          expect(res.status, `${action} ${id}`).toBe(404);
          expect(res.body).toMatchObject({ code: "not_found", data: null });
          expect(res.body.message).toContain(`body.clip_id ${id}`);
        }
      }
      expect(env.sim.received.slice(before)).toEqual([]);
      expect(await env.gw.balance(other.userId)).toBe(1_000_000);
    });

    it("refuses bodies out of bounds with a 400 naming the field, charging nothing", async () => {
      const user = await env.gw.createUser({ quota: 1_000_000 });
      const clipId = await succeededClip(env, user.key);
      const balance = await env.gw.balance(user.userId);
      const bad: [string, unknown, string][] = [
        ["EXTEND", { continue_at: 10 }, "body.clip_id"],
        ["EXTEND", { clip_id: clipId }, "body.continue_at"],
        ["EXTEND", { clip_id: clipId, continue_at: 0 }, "body.continue_at"],
        ["EXTEND", { clip_id: clipId, continue_at: 481 }, "body.continue_at"],
        ["EXTEND", { clip_id: clipId, continue_at: "10" }, "body.continue_at"],
        ["EXTEND", { clip_id: clipId, continue_at: 10, tags: "x".repeat(201) }, "body.tags"],
        ["EXTEND", { clip_id: clipId, continue_at: 10, title: "x".repeat(121) }, "body.title"],
        ["EXTEND", { clip_id: clipId, continue_at: 10, mv: "no spaces allowed" }, "body.mv"],
        ["EXTEND", { clip_id: "nope", continue_at: 10 }, "body.clip_id"],
        ["COVER", { prompt: "x" }, "body.clip_id"],
        ["COVER", { clip_id: clipId, upload_id: clipId }, "body.clip_id"],
        ["COVER", { clip_id: clipId, cover_strength: 1.5 }, "body.cover_strength"],
        ["COVER", { clip_id: clipId, prompt: "x".repeat(3001) }, "body.prompt"],
        ["ADD_INSTRUMENTAL", {}, "body.clip_id"],
        ["ADD_VOCALS", { upload_id: "nope" }, "body.upload_id"],
        ["VOCALS_SWAP", { clip_id: clipId, upload_id: clipId }, "body.clip_id"],
      ];
      for (const [action, body, field] of bad) {
        const res = await submit(env.gw.url, user.key, "audioa", action, body);
        expect(res.status, `${action} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body.code).toBe("invalid_request");
        expect(res.body.message).toContain(field);
      }
      expect(await env.gw.balance(user.userId)).toBe(balance);
    });

    it("refuses a lyric sheet as the clip to work on", async () => {
      const user = await env.gw.createUser({ quota: 1_000_000 });
      const lyrics = await runAction(env, user.key, "LYRICS", { prompt: "a sheet" });
      const sheetId = lyrics.record.data.clips[0].clip_id as string;
      const res = await submit(env.gw.url, user.key, "audioa", "EXTEND", { clip_id: sheetId, continue_at: 5 });
      expect(res.status).toBe(404);
      expect(res.body.message).toContain("body.clip_id");
    });
  });
}
