import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type Answer, eventually, ledgerRowsOf, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

/** Quota of each action at its default price (price x 500000). */
const QUOTA: Record<string, number> = {
  LYRICS: 2_500,
  EXTEND: 50_000,
  COVER: 50_000,
  ADD_INSTRUMENTAL: 50_000,
  ADD_VOCALS: 50_000,
  STEMS: 10_000,
  WAV: 5_000,
  MUSIC_VIDEO: 10_000,
  UPLOAD: 5_000,
};

/** The fields of an audiob clip (section 2.4 of the interface), in order. */
const AUDIOB_CLIP_FIELDS = [
  "clip_id",
  "state",
  "title",
  "tags",
  "lyrics",
  "image_url",
  "audio_url",
  "video_url",
  "created_at",
  "duration",
  "negative_tags",
  "style_weight",
  "weirdness_constraint",
  "audio_weight",
];

async function bytesOf(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`audiob actions on a generate-record upstream [${kind}]`, () => {
    let env: TaskEnv;
    let user: { userId: number; key: string };
    /** A clip of one of the user's MUSIC tasks, its task's upstream id and its record. */
    let song: { clipId: string; upstreamId: string; audioUrl: string };

    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { generateRecord: { completeAfterMs: 200 } },
        config: { uploads: { allowPrivateUrls: true } },
      });
      user = await env.gw.createUser({ quota: 10_000_000 });
      const sub = await submit(env.gw.url, user.key, "audiob", "MUSIC", { prompt: "a song to work on" });
      const record = await waitForTask(env.gw.url, user.key, "audiob", sub.body.data);
      expect(record.status).toBe("SUCCESS");
      const sent = env.sim.received.find((r) => r.path === "/api/v1/generate");
      const row = await env.gw.gateway.ctx.store.db
        .selectFrom("tasks")
        .select(["upstream_id"])
        .where("task_id", "=", sub.body.data)
        .executeTakeFirstOrThrow();
      expect(sent).toBeDefined();
      song = {
        clipId: record.data.clips[0].clip_id,
        upstreamId: String(row.upstream_id),
        audioUrl: record.data.clips[0].audio_url,
      };
    });
    afterAll(async () => {
      await env?.close();
    });

    /** Submits, waits for SUCCESS, checks the charge; returns the record and what the upstream got. */
    async function run(action: string, body: unknown, submitPath: string | null) {
      const { gw, sim } = env;
      const before = sim.received.length;
      const sub: Answer = await submit(gw.url, user.key, "audiob", action, body);
      expect(sub.status, JSON.stringify(sub.body)).toBe(200);
      expect(sub.body.data).toMatch(/^task_/);
      const record = await waitForTask(gw.url, user.key, "audiob", sub.body.data);
      expect(record.status, record.fail_reason).toBe("SUCCESS");
      expect(record.action).toBe(action);
      expect(record.quota).toBe(QUOTA[action]);
      expect(await ledgerRowsOf(gw, user.userId, sub.body.data)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -(QUOTA[action] as number) },
      ]);
      const calls = sim.received.slice(before);
      const sent = submitPath === null ? undefined : calls.find((r) => r.method === "POST" && r.path === submitPath);
      if (submitPath !== null) expect(sent, `nothing sent to ${submitPath}`).toBeDefined();
      return { record, sent: sent?.body as Record<string, unknown>, calls };
    }

    it("LYRICS: lyric sheets with section markers and no audio, polled at lyrics/record-info", async () => {
      const { record, sent, calls } = await run("LYRICS", { prompt: "a night drive" }, "/api/v1/lyrics");
      expect(sent).toMatchObject({ prompt: "a night drive" });
      expect(sent.callBackUrl).toMatch(/\/audiob\/callback\//);
      expect(calls.some((r) => r.path.startsWith("/api/v1/lyrics/record-info?taskId="))).toBe(true);
      expect(calls.some((r) => r.path.startsWith("/api/v1/generate/record-info"))).toBe(false);
      expect(record.data.clips.length).toBeGreaterThan(0);
      for (const sheet of record.data.clips) {
        expect(sheet.title).not.toBe("");
        expect(sheet.text).toContain("[Verse]");
        expect(sheet.text).toContain("[Chorus]");
        expect(sheet.audio_url).toBeNull();
      }
    });

    it("EXTEND: the provider's extend route with the clip's id, and new clips with audio", async () => {
      const { record, sent } = await run(
        "EXTEND",
        { clip_id: song.clipId, continue_at: 42.5, prompt: "[Bridge] on and on", tags: "synthwave", title: "Longer" },
        "/api/v1/generate/extend",
      );
      expect(sent).toMatchObject({
        audioId: song.clipId,
        continueAt: 42.5,
        defaultParamFlag: true,
        prompt: "[Bridge] on and on",
        style: "synthwave",
        title: "Longer",
        model: "V4_5",
      });
      expect(record.data.clips.length).toBeGreaterThan(0);
      for (const clip of record.data.clips) {
        expect(clip.audio_url).not.toBe("");
        expect((await bytesOf(clip.audio_url)).subarray(0, 3).toString("latin1")).toBe("ID3");
      }
    });

    it("COVER of a clip: upload-cover with the clip's audio and cover_strength as audioWeight", async () => {
      const { record, sent } = await run(
        "COVER",
        { clip_id: song.clipId, prompt: "as a jazz ballad", tags: "jazz", title: "Cover", cover_strength: 0.4 },
        "/api/v1/generate/upload-cover",
      );
      expect(sent).toMatchObject({
        uploadUrl: song.audioUrl,
        prompt: "as a jazz ballad",
        style: "jazz",
        title: "Cover",
        customMode: true,
        instrumental: false,
        audioWeight: 0.4,
      });
      expect(record.data.clips[0].audio_url).not.toBe("");
      expect(record.data.clips[0].audio_weight).toBe(0.4);
    });

    it("ADD_INSTRUMENTAL and ADD_VOCALS: their provider routes with the clip's audio", async () => {
      const inst = await run(
        "ADD_INSTRUMENTAL",
        { clip_id: song.clipId, tags: "acoustic guitar", title: "Backed" },
        "/api/v1/generate/add-instrumental",
      );
      expect(inst.sent).toMatchObject({ uploadUrl: song.audioUrl, tags: "acoustic guitar", title: "Backed" });
      expect(inst.record.data.clips[0].audio_url).not.toBe("");
      const vocals = await run(
        "ADD_VOCALS",
        { clip_id: song.clipId, prompt: "[Verse] la la", tags: "soul", title: "Sung" },
        "/api/v1/generate/add-vocals",
      );
      expect(vocals.sent).toMatchObject({ uploadUrl: song.audioUrl, prompt: "[Verse] la la", style: "soul" });
      expect(vocals.record.data.clips[0].audio_url).not.toBe("");
    });

    it("STEMS: vocal-removal with the source task's upstream id, one clip per stem titled by it", async () => {
      const vocals = await run("STEMS", { clip_id: song.clipId, kind: "vocals" }, "/api/v1/vocal-removal/generate");
      expect(vocals.sent).toMatchObject({ taskId: song.upstreamId, audioId: song.clipId, type: "separate_vocal" });
      expect(vocals.calls.some((r) => r.path.startsWith("/api/v1/vocal-removal/record-info?taskId="))).toBe(true);
      expect(vocals.record.data.clips.map((c: any) => c.title)).toEqual(["vocals", "instrumental"]);
      for (const clip of vocals.record.data.clips) {
        expect(Object.keys(clip)).toEqual(AUDIOB_CLIP_FIELDS);
        expect((await bytesOf(clip.audio_url)).subarray(0, 3).toString("latin1")).toBe("ID3");
      }

      const all = await run("STEMS", { clip_id: song.clipId, kind: "all" }, "/api/v1/vocal-removal/generate");
      expect(all.sent).toMatchObject({ type: "split_stem" });
      const titles = all.record.data.clips.map((c: any) => c.title);
      expect(titles).toEqual(
        expect.arrayContaining(["vocals", "backing_vocals", "drums", "bass", "guitar", "keyboard"]),
      );
      expect(new Set(all.record.data.clips.map((c: any) => c.clip_id)).size).toBe(titles.length);
    });

    it("refunds a WAV of a stem: the provider never made that clip, so nothing is sent", async () => {
      const { gw, sim } = env;
      const stems = await run("STEMS", { clip_id: song.clipId, kind: "vocals" }, "/api/v1/vocal-removal/generate");
      const before = sim.received.length;
      const sub = await submit(gw.url, user.key, "audiob", "WAV", { clip_id: stems.record.data.clips[0].clip_id });
      expect(sub.status).toBe(200);
      const record = await waitForTask(gw.url, user.key, "audiob", sub.body.data);
      expect(record.status).toBe("FAILURE");
      expect(record.fail_reason).toContain("WAV works only on clips of music tasks");
      expect(sim.received.slice(before).filter((r) => r.path.startsWith("/api/v1/"))).toEqual([]);
      const quota = QUOTA.WAV as number;
      expect(await ledgerRowsOf(gw, user.userId, sub.body.data)).toEqual(
        expect.arrayContaining([
          { kind: "charge", amount: -quota },
          { kind: "refund", amount: quota },
        ]),
      );
    });

    it("WAV: wav/generate, and the clip's audio_url is a RIFF/WAVE file", async () => {
      const { record, sent } = await run("WAV", { clip_id: song.clipId }, "/api/v1/wav/generate");
      expect(sent).toMatchObject({ taskId: song.upstreamId, audioId: song.clipId });
      expect(record.data.clips).toHaveLength(1);
      expect(Object.keys(record.data.clips[0])).toEqual(AUDIOB_CLIP_FIELDS);
      expect(record.data.clips[0]).toMatchObject({ state: "completed", title: "wav", video_url: null });
      const wav = await bytesOf(record.data.clips[0].audio_url);
      expect(wav.subarray(0, 4).toString("latin1")).toBe("RIFF");
      expect(wav.subarray(8, 12).toString("latin1")).toBe("WAVE");
      expect(record.result_url).toBe(record.data.clips[0].audio_url);
    });

    it("MUSIC_VIDEO: mp4/generate, and the clip's video_url is an MP4 with an ftyp box", async () => {
      const { record, sent } = await run("MUSIC_VIDEO", { clip_id: song.clipId }, "/api/v1/mp4/generate");
      expect(sent).toMatchObject({ taskId: song.upstreamId, audioId: song.clipId });
      expect(Object.keys(record.data.clips[0])).toEqual(AUDIOB_CLIP_FIELDS);
      expect(record.data.clips[0]).toMatchObject({ audio_url: "", title: "video" });
      const mp4 = await bytesOf(record.data.clips[0].video_url);
      expect(mp4.subarray(4, 8).toString("latin1")).toBe("ftyp");
      // With no audio, the record's result is the video.
      expect(record.result_url).toBe(record.data.clips[0].video_url);
    });

    it("UPLOAD completes in the gateway; its upload_id feeds COVER, ADD_VOCALS and EXTEND", async () => {
      const fileUrl = `${env.sim.url}/media/melody.mp3`;
      const up = await run("UPLOAD", { url: fileUrl }, null);
      // The provider has no upload route: no call reached it.
      expect(up.calls.filter((r) => r.path.startsWith("/api/v1/"))).toEqual([]);
      const clip = up.record.data.clips[0];
      expect(clip.clip_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(clip.audio_url).not.toBe(fileUrl);
      expect((await bytesOf(clip.audio_url)).subarray(0, 3).toString("latin1")).toBe("ID3");

      const cover = await run(
        "COVER",
        { upload_id: clip.clip_id, prompt: "as a waltz" },
        "/api/v1/generate/upload-cover",
      );
      expect(cover.sent).toMatchObject({ uploadUrl: clip.audio_url, prompt: "as a waltz", customMode: false });
      const vocals = await run("ADD_VOCALS", { upload_id: clip.clip_id, prompt: "hum" }, "/api/v1/generate/add-vocals");
      expect(vocals.sent).toMatchObject({ uploadUrl: clip.audio_url });
      const extend = await run("EXTEND", { clip_id: clip.clip_id, continue_at: 10 }, "/api/v1/generate/upload-extend");
      expect(extend.sent).toMatchObject({ uploadUrl: clip.audio_url, continueAt: 10, defaultParamFlag: false });
      expect(extend.sent.audioId).toBeUndefined();
    });

    it("a clip of another user is a 404 and nothing reaches the upstream", async () => {
      const { gw, sim } = env;
      const other = await gw.createUser({ quota: 1_000_000 });
      const before = sim.received.length;
      for (const [action, body] of [
        ["EXTEND", { clip_id: song.clipId, continue_at: 5 }],
        ["WAV", { clip_id: song.clipId }],
        ["COVER", { upload_id: song.clipId }],
      ] as const) {
        const res = await submit(gw.url, other.key, "audiob", action, body);
        expect(res.status, action).toBe(404);
        expect(res.body.data).toBeNull();
      }
      await eventually(async () => true);
      expect(sim.received.length).toBe(before);
      expect(await gw.balance(other.userId)).toBe(1_000_000);
    });
  });
}
