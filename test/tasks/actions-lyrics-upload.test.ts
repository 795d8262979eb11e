import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mp3File, sineWav } from "../../src/simulator/media.js";
import {
  download,
  expectRefunded,
  expectSettled,
  type FileServer,
  runAction,
  sentUpstream,
  serveFiles,
  succeededClip,
} from "./actions-harness.js";
import { startTaskEnv, submit, type TaskEnv } from "./harness.js";

const UPLOAD_MAX_BYTES = 32 * 1024;

describe("LYRICS and UPLOAD on audioa (task-relay)", () => {
  let env: TaskEnv;
  let files: FileServer;
  beforeAll(async () => {
    env = await startTaskEnv("sqlite", {
      sim: { taskRelay: { completeAfterMs: 200, failActions: ["WAV"] } },
      config: { uploads: { allowPrivateUrls: true, maxBytes: UPLOAD_MAX_BYTES } },
    });
    files = await serveFiles({
      "/song.mp3": { type: "audio/mpeg", bytes: mp3File("an upload") },
      "/tone.wav": { type: "audio/x-wav; charset=binary", bytes: sineWav() },
      "/big.mp3": { type: "audio/mpeg", bytes: Buffer.alloc(UPLOAD_MAX_BYTES + 1, 0xff) },
      "/page.html": { type: "text/html", bytes: Buffer.from("<html></html>") },
    });
  });
  afterAll(async () => {
    await files?.close();
    await env?.close();
  });

  it("writes lyric sheets: clips with a title and a text with section markers, no audio", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const before = env.sim.received.length;
    const { taskId, record } = await runAction(env, user.key, "LYRICS", { prompt: "rain over the harbour" });
    expect((await sentUpstream(env, "LYRICS", before))?.body).toEqual({ prompt: "rain over the harbour" });
    expect(record.status).toBe("SUCCESS");
    expect(record.action).toBe("LYRICS");
    expect(record.result_url).toBe("");
    expect(record.properties.input).toBe("rain over the harbour");
    expect(record.data.clips.length).toBeGreaterThan(0);
    for (const clip of record.data.clips) {
      expect(Object.keys(clip).sort()).toEqual(["audio_url", "clip_id", "created_at", "state", "text", "title"]);
      expect(clip.audio_url).toBeNull();
      expect(clip.title).not.toBe("");
      expect(clip.text).toMatch(/\[Verse\]/);
      expect(clip.text).toMatch(/\[Chorus\]/);
    }
    await expectSettled(env, user.userId, taskId, "LYRICS");
  });

  it("refunds a LYRICS task the upstream fails, once", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const { taskId, record } = await runAction(env, user.key, "LYRICS", { prompt: "a sad song [fail]" });
    expect(record.status).toBe("FAILURE");
    expect(record.fail_reason).not.toBe("");
    await expectRefunded(env, user.userId, taskId, "LYRICS");
    expect(await env.gw.balance(user.userId)).toBe(1_000_000);
  });

  it("refuses a blank or missing LYRICS prompt with a 400 naming it", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    for (const body of [{}, { prompt: "" }, { prompt: "   " }, { prompt: "x".repeat(3001) }]) {
      const res = await submit(env.gw.url, user.key, "audioa", "LYRICS", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain("body.prompt");
    }
    expect(await env.gw.balance(user.userId)).toBe(1_000_000);
  });

  it("brings an uploaded file in, stores it, and sends the upstream the gateway's copy", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const before = env.sim.received.length;
    const { taskId, record } = await runAction(env, user.key, "UPLOAD", { url: `${files.url}/song.mp3` });
    const sent = (await sentUpstream(env, "UPLOAD", before))?.body as { url: string };
    expect(sent.url.startsWith(`${env.gw.url}/audioa/files/`)).toBe(true);
    expect(sent.url).not.toContain(files.url);
    const copy = await download(sent.url);
    expect(copy.status).toBe(200);
    expect(copy.type).toBe("audio/mpeg");
    expect(copy.bytes.equals(mp3File("an upload"))).toBe(true);

    expect(record.status).toBe("SUCCESS");
    expect(record.properties.input).toBe(`${files.url}/song.mp3`);
    expect(record.data.clips).toHaveLength(1);
    const [clip] = record.data.clips;
    expect(clip.clip_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(clip.audio_url).toBe(sent.url);
    expect(record.result_url).toBe(sent.url);
    await expectSettled(env, user.userId, taskId, "UPLOAD");
  });

  it("stores a WAV upload under its own type, whatever spelling the server used", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const { record } = await runAction(env, user.key, "UPLOAD", { url: `${files.url}/tone.wav` });
    expect(record.status).toBe("SUCCESS");
    const copy = await download(record.data.clips[0].audio_url);
    expect(copy.type).toBe("audio/wav");
    expect(copy.bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
  });

  it("refuses, naming url and without an upstream call, what it cannot bring in; its hold is refunded", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const before = env.sim.received.length;
    const cases: [string, RegExp][] = [
      [`${files.url}/page.html`, /content type "text\/html"/],
      [`${files.url}/big.mp3`, /larger than the upload limit/],
      [`${files.url}/missing.mp3`, /HTTP 404/],
      ["ftp://example.com/a.mp3", /http\(s\)/],
      ["not a url", /http\(s\)/],
    ];
    for (const [url, why] of cases) {
      const res = await submit(env.gw.url, user.key, "audioa", "UPLOAD", { url });
      expect(res.status, url).toBe(400);
      expect(res.body.code).toBe("invalid_request");
      expect(res.body.message).toContain("body.url");
      expect(res.body.message).toMatch(why);
    }
    expect(env.sim.received.length).toBe(before);
    expect(await env.gw.balance(user.userId)).toBe(1_000_000);
  });

  it("lets the upload's clip id be the upload_id of COVER and the clip_id of EXTEND, for its owner only", async () => {
    const owner = await env.gw.createUser({ quota: 1_000_000 });
    const other = await env.gw.createUser({ quota: 1_000_000 });
    const upload = await runAction(env, owner.key, "UPLOAD", { url: `${files.url}/song.mp3` });
    const uploadId = upload.record.data.clips[0].clip_id as string;

    const cover = await runAction(env, owner.key, "COVER", { upload_id: uploadId, prompt: "as a jazz ballad" });
    expect(cover.record.status).toBe("SUCCESS");
    const extend = await runAction(env, owner.key, "EXTEND", { clip_id: uploadId, continue_at: 12.5 });
    expect(extend.record.status).toBe("SUCCESS");

    const before = env.sim.received.length;
    const foreign = await submit(env.gw.url, other.key, "audioa", "COVER", { upload_id: uploadId });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: "not_found", data: null });
    expect(foreign.body.message).toContain("body.upload_id");
    // A song's clip is no upload.
    const song = await succeededClip(env, owner.key);
    const notUpload = await submit(env.gw.url, owner.key, "audioa", "ADD_VOCALS", { upload_id: song });
    expect(notUpload.status).toBe(404);
    expect(notUpload.body.message).toContain("body.upload_id");
    expect(env.sim.received.slice(before).filter((r) => /\/submit\/(COVER|ADD_VOCALS)$/.test(r.path))).toEqual([]);
    expect(await env.gw.balance(other.userId)).toBe(1_000_000);
  });

  it("answers a repeated UPLOAD with the same Idempotency-Key with the same task, fetched and charged once", async () => {
    const user = await env.gw.createUser({ quota: 1_000_000 });
    const before = env.sim.received.length;
    const send = () =>
      fetch(`${env.gw.url}/audioa/submit/UPLOAD`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${user.key}`,
          "content-type": "application/json",
          "idempotency-key": "upload-once-1",
        },
        body: JSON.stringify({ url: `${files.url}/song.mp3` }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data: string } }));
    const first = await send();
    const second = await send();
    expect(first.status).toBe(200);
    expect(second).toEqual(first);
    await sentUpstream(env, "UPLOAD", before);
    expect(env.sim.received.slice(before).filter((r) => r.path.endsWith("/submit/UPLOAD"))).toHaveLength(1);
    expect(await env.gw.balance(user.userId)).toBe(1_000_000 - 5_000);
  });
});
