import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { download, expectRefunded, expectSettled, runAction, sentUpstream, succeededClip } from "./actions-harness.js";
import { startTaskEnv, submit, type TaskEnv } from "./harness.js";

const SOME_UUID = "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11";

describe("STEMS, WAV and MUSIC_VIDEO on audioa (task-relay)", () => {
  let env: TaskEnv;
  beforeAll(async () => {
    env = await startTaskEnv("sqlite", { sim: { taskRelay: { completeAfterMs: 200 } } });
  });
  afterAll(async () => {
    await env?.close();
  });

  it("separates vocals: one clip per stem, titled by the stem, each with its audio", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const before = env.sim.received.length;
    const { taskId, record } = await runAction(env, user.key, "STEMS", { clip_id: clipId, kind: "vocals" });
    expect((await sentUpstream(env, "STEMS", before))?.body).toEqual({ clip_id: clipId, kind: "vocals" });
    expect(record.status).toBe("SUCCESS");
    expect(record.properties.input).toBe("vocals");
    expect(record.data.clips.map((c: { title: string }) => c.title)).toEqual(["vocals", "instrumental"]);
    for (const clip of record.data.clips) {
      const file = await download(clip.audio_url);
      expect(file.status).toBe(200);
      expect(file.type).toMatch(/^audio\//);
    }
    await expectSettled(env, user.userId, taskId, "STEMS");
  });

  it("separates every stem with kind all", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const { record } = await runAction(env, user.key, "STEMS", { clip_id: clipId, kind: "all" });
    expect(record.data.clips.map((c: { title: string }) => c.title)).toEqual([
      "vocals",
      "backing_vocals",
      "drums",
      "bass",
      "guitar",
      "keyboard",
      "other",
    ]);
  });

  it("makes a WAV: the result clip's audio_url is a .wav file of the gateway", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const { taskId, record } = await runAction(env, user.key, "WAV", { clip_id: clipId });
    expect(record.status).toBe("SUCCESS");
    expect(record.data.clips).toHaveLength(1);
    const wav = record.data.clips[0].audio_url as string;
    expect(wav).toMatch(new RegExp(`^${env.gw.url}/audioa/files/\\w+\\.wav$`));
    expect(record.result_url).toBe(wav);
    const file = await download(wav);
    expect(file.type).toBe("audio/wav");
    expect(file.bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
    expect(file.bytes.subarray(8, 12).toString("ascii")).toBe("WAVE");
    await expectSettled(env, user.userId, taskId, "WAV");
  });

  it("makes a music video: the result clip's video_url is an .mp4 of the gateway", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const { taskId, record } = await runAction(env, user.key, "MUSIC_VIDEO", { clip_id: clipId });
    expect(record.status).toBe("SUCCESS");
    const video = record.data.clips[0].video_url as string;
    expect(video).toMatch(new RegExp(`^${env.gw.url}/audioa/files/\\w+\\.mp4$`));
    const file = await download(video);
    expect(file.type).toBe("video/mp4");
    expect(file.bytes.subarray(4, 8).toString("ascii")).toBe("ftyp");
    await expectSettled(env, user.userId, taskId, "MUSIC_VIDEO");
  });

  it("serves a WAV's and a video's files from the gateway after the upstream has forgotten them", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const wav = await runAction(env, user.key, "WAV", { clip_id: clipId });
    const video = await runAction(env, user.key, "MUSIC_VIDEO", { clip_id: clipId });
    env.sim.state.options.media = { gone: true };
    try {
      for (const url of [wav.record.data.clips[0].audio_url, video.record.data.clips[0].video_url]) {
        const file = await download(url);
        expect(file.status, url).toBe(200);
        expect(file.bytes.length).toBeGreaterThan(0);
      }
    } finally {
      env.sim.state.options.media = {};
    }
  });

  it("refuses another user's clip with a 404 and bad bodies with a 400 naming the field, calling no upstream", async () => {
    const owner = await env.gw.createUser({ quota: 1_000_000 });
    const other = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, owner.key);
    const before = env.sim.received.length;
    for (const [action, body] of [
      ["STEMS", { clip_id: clipId, kind: "vocals" }],
      ["WAV", { clip_id: clipId }],
      ["MUSIC_VIDEO", { clip_id: SOME_UUID }],
    ] as const) {
      const res = await submit(env.gw.url, other.key, "audioa", action, body);
      expect(res.status, action).toBe(404);
      expect(res.body.message).toContain("body.clip_id");
    }
    for (const [action, body, field] of [
      ["STEMS", { clip_id: clipId, kind: "drums" }, "body.kind"],
      ["STEMS", { clip_id: clipId }, "body.kind"],
      ["WAV", {}, "body.clip_id"],
      ["MUSIC_VIDEO", { clip_id: 5 }, "body.clip_id"],
    ] as const) {
      const res = await submit(env.gw.url, owner.key, "audioa", action, body);
      expect(res.status, `${action} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.message).toContain(field);
    }
    expect(env.sim.received.slice(before)).toEqual([]);
    expect(await env.gw.balance(other.userId)).toBe(1_000_000);
  });
});

describe("failed STEMS, WAV and MUSIC_VIDEO tasks", () => {
  let env: TaskEnv;
  beforeAll(async () => {
    env = await startTaskEnv("sqlite", {
      sim: { taskRelay: { completeAfterMs: 200, failActions: ["STEMS", "WAV", "MUSIC_VIDEO"] } },
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it("are refunded exactly once", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const clipId = await succeededClip(env, user.key);
    const balance = await env.gw.balance(user.userId);
    for (const [action, body] of [
      ["STEMS", { clip_id: clipId, kind: "all" }],
      ["WAV", { clip_id: clipId }],
      ["MUSIC_VIDEO", { clip_id: clipId }],
    ] as const) {
      const { taskId, record } = await runAction(env, user.key, action, body);
      expect(record.status, action).toBe("FAILURE");
      expect(record.fail_reason).toBe("simulated failure");
      expect("result_url" in record).toBe(false);
      await expectRefunded(env, user.userId, taskId, action);
    }
    expect(await env.gw.balance(user.userId)).toBe(balance);
  });
});
