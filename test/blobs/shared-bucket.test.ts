import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mp3File } from "../../src/simulator/media.js";
import { simMediaFile } from "../../src/simulator/media-files.js";
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { startTestBucket, type TestBucket } from "../support/s3.js";
import { type FileServer, serveFiles } from "../tasks/actions-harness.js";
import { FAST_TASKS, submit, waitForTask } from "../tasks/harness.js";
import { untilEnded } from "../videos/harness.js";

/** Every answer a test saw: status, headers and body text, searched for secrets at the end. */
const seen: string[] = [];

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, redirect: "manual" });
  const bytes = Buffer.from(await res.arrayBuffer());
  seen.push(`${res.status} ${JSON.stringify([...res.headers])} ${bytes.toString("latin1")}`);
  return { status: res.status, headers: res.headers, bytes };
}

/** The same path on another instance. */
function on(instance: TestGateway, url: string, from: TestGateway): string {
  expect(url.startsWith(from.url)).toBe(true);
  return instance.url + url.slice(from.url.length);
}

describe.skipIf(!HAS_PG)("two instances sharing one bucket and one PostgreSQL", () => {
  let bucket: TestBucket;
  let sim: Simulator;
  let files: FileServer;
  let a: TestGateway;
  let b: TestGateway;
  let redirecting: TestGateway;
  let key: string;

  beforeAll(async () => {
    bucket = await startTestBucket();
    sim = await startSimulator({ seed: 11, keys: ["sim-key"], taskRelay: { completeAfterMs: 200 } });
    files = await serveFiles({ "/song.mp3": { type: "audio/mpeg", bytes: mp3File("shared upload") } });
    const shared = {
      ...FAST_TASKS,
      logLevel: "info" as const,
      ...bucket.settings(),
      uploads: { allowPrivateUrls: true },
    };
    a = await startTestGateway("postgres", shared);
    await a.createChannel({ type: "gemini", baseUrl: sim.url, models: ["image-model"] });
    await a.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
    await a.createChannel({ type: "openai-videos", baseUrl: sim.url, models: ["sora-2"] });
    // B serves requests only: every stored copy of a task result is made by A's worker.
    const databaseUrl = a.gateway.ctx.config.databaseUrl;
    b = await startTestGateway("postgres", { ...shared, role: "api" }, { databaseUrl });
    redirecting = await startTestGateway(
      "postgres",
      { ...shared, role: "api", ...bucket.settings("redirect") },
      { databaseUrl },
    );
    key = (await a.createUser()).key;
  });
  afterAll(async () => {
    await redirecting?.close();
    await b?.close();
    await a?.close();
    await files?.close();
    await sim?.close();
    await bucket?.close();
  });

  it("serves from B, whole and in ranges, an image generated through A", async () => {
    const res = await fetch(`${a.url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "image-model", prompt: "a lighthouse" }),
    });
    expect(res.status).toBe(200);
    const url = ((await res.json()) as { data: { url: string }[] }).data[0]?.url as string;
    const fromA = await get(url);
    expect(fromA.status).toBe(200);
    expect(fromA.headers.get("content-type")).toBe("image/png");

    const fromB = await get(on(b, url, a));
    expect(fromB.status).toBe(200);
    expect(fromB.headers.get("content-type")).toBe("image/png");
    expect(fromB.bytes.equals(fromA.bytes)).toBe(true);

    const size = fromA.bytes.length;
    const part = await get(on(b, url, a), { range: "bytes=8-23" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 8-23/${size}`);
    expect(part.bytes.equals(fromA.bytes.subarray(8, 24))).toBe(true);
    const tail = await get(on(b, url, a), { range: "bytes=-12" });
    expect(tail.bytes.equals(fromA.bytes.subarray(size - 12))).toBe(true);
    expect((await get(on(b, url, a), { range: `bytes=${size}-` })).status).toBe(416);

    const head = await fetch(on(b, url, a), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(size));

    // The object is where the settings say, with the image's type.
    const objectKey = url.slice(url.lastIndexOf("/") + 1);
    expect(await bucket.list("images/")).toContain(`${bucket.prefix}/images/${objectKey}`);
    const missing = await get(`${b.url}/v1/images/files/${"Z".repeat(40)}.png`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.bytes.toString()).error.message).toBe("No such image.");
  });

  it("serves from B the stored copies of an audio task's results made by A", async () => {
    const sub = await submit(b.url, key, "audioa", "MUSIC", { prompt: "[Verse] two harbours", title: "Shared" });
    expect(sub.status).toBe(200);
    const record = await waitForTask(b.url, key, "audioa", sub.body.data);
    expect(record.status).toBe("SUCCESS");
    const clip = record.data.clips[0];
    const original = simMediaFile(`${clip.clip_id}.mp3`)?.bytes as Buffer;
    // The copy was made by A (B runs no workers), so its URL is A's.
    expect(clip.audio_url.startsWith(`${a.url}/audioa/files/`)).toBe(true);

    const whole = await get(on(b, clip.audio_url, a));
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("audio/mpeg");
    expect(whole.bytes.equals(original)).toBe(true);
    const part = await get(on(b, clip.audio_url, a), { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.bytes.equals(original.subarray(100, 200))).toBe(true);
    const cover = await get(on(b, clip.image_url, a));
    expect(cover.headers.get("content-type")).toBe("image/png");
    expect(cover.bytes.equals(simMediaFile(`${clip.clip_id}.png`)?.bytes as Buffer)).toBe(true);
  });

  it("lets B serve, and use, a file an UPLOAD brought in through A", async () => {
    const up = await submit(a.url, key, "audioa", "UPLOAD", { url: `${files.url}/song.mp3` });
    expect(up.status).toBe(200);
    const record = await waitForTask(a.url, key, "audioa", up.body.data);
    expect(record.status).toBe("SUCCESS");
    const [clip] = record.data.clips;
    const copy = await get(on(b, clip.audio_url, a));
    expect(copy.status).toBe(200);
    expect(copy.bytes.equals(mp3File("shared upload"))).toBe(true);

    // Submitted through B, a COVER of the upload runs on the shared store.
    const cover = await submit(b.url, key, "audioa", "COVER", { upload_id: clip.clip_id, prompt: "as a waltz" });
    expect(cover.status).toBe(200);
    expect((await waitForTask(b.url, key, "audioa", cover.body.data)).status).toBe("SUCCESS");
  });

  it("answers downloads with a 302 to a presigned URL of the bucket when set to redirect", async () => {
    const sub = await submit(a.url, key, "audioa", "MUSIC", { prompt: "[Verse] far away", title: "Moved" });
    const record = await waitForTask(a.url, key, "audioa", sub.body.data);
    const clip = record.data.clips[0];
    const original = simMediaFile(`${clip.clip_id}.mp3`)?.bytes as Buffer;

    const moved = await get(on(redirecting, clip.audio_url, a));
    expect(moved.status).toBe(302);
    expect(moved.headers.get("cache-control")).toBe("no-store");
    const location = moved.headers.get("location") as string;
    const objectKey = clip.audio_url.slice(clip.audio_url.lastIndexOf("/") + 1);
    expect(location).toContain(`${bucket.prefix}/tasks/${objectKey}`);
    expect(location).toContain("X-Amz-Signature=");
    expect(location).not.toContain(bucket.secretAccessKey);

    const direct = await fetch(location);
    expect(direct.status).toBe(200);
    expect(direct.headers.get("content-type")).toBe("audio/mpeg");
    expect(Buffer.from(await direct.arrayBuffer()).equals(original)).toBe(true);
    const ranged = await fetch(location, { headers: { range: "bytes=0-9" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(original.subarray(0, 10))).toBe(true);

    // An unknown key is still the gateway's own 404, never a redirect.
    expect((await get(`${redirecting.url}/audioa/files/${"Z".repeat(40)}.mp3`)).status).toBe(404);
    expect((await get(`${redirecting.url}/v1/images/files/${"Z".repeat(40)}.png`)).status).toBe(404);
  });

  it("serves from B, and by redirect, the files of a video A copied into the bucket", async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${b.url}/v1`, maxRetries: 0 });
    const created = await client.videos.create({ prompt: "a shared harbour", seconds: "4", size: "720x1280" });
    const done = await untilEnded(client, created.id);
    expect(done.status).toBe("completed");
    const source = { prompt: "a shared harbour", seconds: "4", size: "720x1280" };
    for (const variant of ["video", "thumbnail"] as const) {
      const res = await client.videos.downloadContent(created.id, { variant });
      expect(Buffer.from(await res.arrayBuffer()).equals(simVideoFile(source, variant))).toBe(true);
    }
    expect((await bucket.list("videos/")).length).toBeGreaterThanOrEqual(3);

    const moved = await get(`${redirecting.url}/v1/videos/${created.id}/content`, { authorization: `Bearer ${key}` });
    expect(moved.status).toBe(302);
    const location = moved.headers.get("location") as string;
    expect(location).toContain(`${bucket.prefix}/videos/`);
    const direct = await fetch(location);
    expect(Buffer.from(await direct.arrayBuffer()).equals(simVideoFile(source, "video"))).toBe(true);
    // The official client follows the redirect; the bucket never sees the gateway token.
    const viaClient = new OpenAI({ apiKey: key, baseURL: `${redirecting.url}/v1`, maxRetries: 0 });
    const followed = await viaClient.videos.downloadContent(created.id);
    expect(Buffer.from(await followed.arrayBuffer()).equals(simVideoFile(source, "video"))).toBe(true);
  });

  it("never shows the bucket's secret in an answer or a log line, nor its key id outside a redirect", () => {
    const logs = [...a.logs, ...b.logs, ...redirecting.logs];
    expect(logs.length).toBeGreaterThan(0);
    for (const text of [...logs, ...seen]) expect(text).not.toContain(bucket.secretAccessKey);
    // A presigned URL names the key id (that is how the bucket finds the secret to check it);
    // nothing else does.
    const notRedirects = seen.filter((s) => !s.startsWith("302 "));
    for (const text of [...logs, ...notRedirects]) expect(text).not.toContain(bucket.accessKeyId);
  });
});

describe("two instances with stores of their own sharing one bucket", () => {
  let bucket: TestBucket;
  let sim: Simulator;
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    bucket = await startTestBucket();
    sim = await startSimulator({ seed: 12 });
    a = await startTestGateway("sqlite", { logLevel: "warn", ...bucket.settings() });
    b = await startTestGateway("sqlite", { logLevel: "warn", ...bucket.settings() });
    await a.createChannel({ type: "gemini", baseUrl: sim.url, models: ["image-model"] });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await sim?.close();
    await bucket?.close();
  });

  it("serves from B an image stored by A: file URLs need nothing but the bucket", async () => {
    const { key } = await a.createUser();
    const res = await fetch(`${a.url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "image-model", prompt: "a windmill", response_format: "url" }),
    });
    expect(res.status).toBe(200);
    const url = ((await res.json()) as { data: { url: string }[] }).data[0]?.url as string;
    const fromA = await get(url);
    const fromB = await get(on(b, url, a));
    expect(fromB.status).toBe(200);
    expect(fromB.bytes.equals(fromA.bytes)).toBe(true);
    const part = await get(on(b, url, a), { range: "bytes=0-7" });
    expect(part.status).toBe(206);
    expect(part.bytes.equals(fromA.bytes.subarray(0, 8))).toBe(true);
  });
});
