import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { eventually, ledgerRowsOf, sentRow, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_FRACTIONAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/;
const TASK_ID = /^task_[0-9A-Za-z]{32}$/;
const RECORD_FIELDS = [
  "id",
  "created_at",
  "updated_at",
  "task_id",
  "platform",
  "user_id",
  "group",
  "channel_id",
  "quota",
  "action",
  "status",
  "fail_reason",
  "submit_time",
  "start_time",
  "finish_time",
  "progress",
  "properties",
  "data",
];

function expectRecordTypes(r: any) {
  for (const f of [
    "id",
    "created_at",
    "updated_at",
    "user_id",
    "channel_id",
    "quota",
    "submit_time",
    "start_time",
    "finish_time",
  ]) {
    expect(Number.isInteger(r[f]), f).toBe(true);
  }
  for (const f of ["task_id", "platform", "group", "action", "status", "fail_reason", "progress"]) {
    expect(typeof r[f], f).toBe("string");
  }
  expect(r.task_id).toMatch(TASK_ID);
  expect(r.progress).toMatch(/^\d{1,3}%$/);
  expect(Object.keys(r.properties).sort()).toEqual(["input", "origin_model_name", "upstream_model_name"]);
  for (const v of Object.values(r.properties)) expect(typeof v).toBe("string");
  expect(typeof r.data).toBe("object");
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`audio task lifecycle [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 400 }, generateRecord: { completeAfterMs: 400 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("runs an audioa MUSIC task from submit to SUCCESS with every field of the record and clips", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const sub = await submit(gw.url, user.key, "audioa", "MUSIC", {
        prompt: "[Verse]\nneon lights",
        tags: "club banger high-energy edm",
        title: "Electric Dance Party",
        mv: "chirp-v3-5",
      });
      expect(sub.status).toBe(200);
      expect(Object.keys(sub.body)).toEqual(["code", "message", "data"]);
      expect(sub.body.code).toBe("success");
      expect(sub.body.message).toBe("task submitted successfully");
      expect(sub.body.data).toMatch(TASK_ID);
      const taskId = sub.body.data as string;

      const row = await sentRow(gw, taskId);
      expect(row.upstream_id).toBeTruthy();
      expect(JSON.stringify(sub.body)).not.toContain(row.upstream_id);

      const record = await waitForTask(gw.url, user.key, "audioa", taskId);
      expect(record.status).toBe("SUCCESS");
      expect(Object.keys(record)).toEqual([...RECORD_FIELDS.slice(0, 12), "result_url", ...RECORD_FIELDS.slice(12)]);
      expectRecordTypes(record);
      expect(record.platform).toBe("audioa");
      expect(record.action).toBe("MUSIC");
      expect(record.user_id).toBe(user.userId);
      expect(record.group).toBe("default");
      expect(record.channel_id).toBe(env.relayChannelId);
      expect(record.quota).toBe(50_000);
      expect(record.fail_reason).toBe("");
      expect(record.progress).toBe("100%");
      expect(record.finish_time).toBeGreaterThan(0);
      expect(record.start_time).toBeGreaterThan(0);
      expect(record.properties).toEqual({
        input: "[Verse]\nneon lights",
        upstream_model_name: "chirp-v3-5",
        origin_model_name: "chirp-v3-5",
      });
      expect(Object.keys(record.data)).toEqual(["clips", "progress", "quota"]);
      expect(record.data.progress).toBe("100%");
      expect(record.data.quota).toBe("50000");
      expect(record.data.clips).toHaveLength(2);
      for (const clip of record.data.clips) {
        expect(Object.keys(clip).sort()).toEqual([
          "audio_url",
          "clip_id",
          "created_at",
          "duration",
          "image_url",
          "lyrics",
          "mv",
          "seed",
          "sound",
          "state",
          "title",
          "video_url",
        ]);
        expect(clip.clip_id).toMatch(UUID);
        expect(clip.state).toBe("completed");
        expect(clip.title).toBe("Electric Dance Party");
        expect(clip.sound).toBe("club banger high-energy edm");
        expect(clip.lyrics).toBe("[Verse]\nneon lights");
        // Results are the gateway's stored copies, served under the family.
        expect(clip.image_url).toMatch(new RegExp(`^${gw.url}/audioa/files/[A-Za-z0-9]{40}\\.png$`));
        expect(clip.audio_url).toMatch(new RegExp(`^${gw.url}/audioa/files/[A-Za-z0-9]{40}\\.mp3$`));
        expect(clip.video_url).toBeNull();
        expect(clip.created_at).toMatch(ISO_FRACTIONAL);
        expect(clip.mv).toBe("chirp-v3-5");
        expect(clip.seed).toBeNull();
        expect(clip.duration).toBeNull();
      }
      expect(record.result_url).toBe(record.data.clips[0].audio_url);

      expect(await gw.balance(user.userId)).toBe(1_000_000 - 50_000);
      expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -50_000 },
      ]);
      expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(await gw.balance(user.userId));
    });

    it("runs an audiob MUSIC task to SUCCESS with the audiob clip shape", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser({ quota: 1_000_000 });
      const sub = await submit(gw.url, user.key, "audiob", "MUSIC", {
        prompt: "[Verse] night drive",
        style: "synthwave, dreamy",
        title: "Night Drive",
        custom_mode: true,
        model: "V4_5",
        style_weight: 0.65,
      });
      expect(sub.status).toBe(200);
      expect(sub.body.message).toBe("task submitted successfully");
      const taskId = sub.body.data as string;

      // The send follows the answer.
      const sent = await eventually(async () =>
        sim.received.find((r) => r.protocol === "generate-record" && r.method === "POST"),
      );
      expect(sent?.body).toMatchObject({
        prompt: "[Verse] night drive",
        style: "synthwave, dreamy",
        title: "Night Drive",
        customMode: true,
        instrumental: false,
        model: "V4_5",
        styleWeight: 0.65,
      });
      expect((sent?.body as any)?.callBackUrl).toMatch(/\/audiob\/callback\/[A-Za-z0-9]{32}$/);

      const record = await waitForTask(gw.url, user.key, "audiob", taskId);
      expect(record.status).toBe("SUCCESS");
      expectRecordTypes(record);
      expect(record.platform).toBe("audiob");
      expect(record.channel_id).toBe(env.recordChannelId);
      expect(record.properties.origin_model_name).toBe("V4_5");
      expect(Object.keys(record.data)).toEqual(["clips"]);
      expect(record.data.clips).toHaveLength(2);
      for (const clip of record.data.clips) {
        expect(Object.keys(clip).sort()).toEqual([
          "audio_url",
          "audio_weight",
          "clip_id",
          "created_at",
          "duration",
          "image_url",
          "lyrics",
          "negative_tags",
          "state",
          "style_weight",
          "tags",
          "title",
          "video_url",
          "weirdness_constraint",
        ]);
        expect(clip.clip_id).toMatch(UUID);
        expect(clip.state).toBe("completed");
        expect(clip.title).toBe("Night Drive");
        expect(clip.tags).toBe("synthwave, dreamy");
        expect(clip.lyrics).toBe("[Verse] night drive");
        expect(clip.audio_url).toMatch(new RegExp(`^${gw.url}/audiob/files/[A-Za-z0-9]{40}\\.mp3$`));
        expect(clip.image_url).toMatch(new RegExp(`^${gw.url}/audiob/files/[A-Za-z0-9]{40}\\.png$`));
        expect(clip.video_url).toBeNull();
        expect(clip.created_at).toMatch(ISO_FRACTIONAL);
        expect(typeof clip.duration).toBe("number");
        expect(clip.negative_tags).toBeNull();
        expect(clip.style_weight).toBe(0.65);
        expect(clip.weirdness_constraint).toBeNull();
        expect(clip.audio_weight).toBeNull();
      }
      expect(record.result_url).toBe(record.data.clips[0].audio_url);
      expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -50_000 },
      ]);
    });
  });
}
