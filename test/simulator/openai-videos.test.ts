import OpenAI, { toFile } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { OpenAiVideosReceived, VideoDownload } from "../../src/simulator/openai-videos.js";
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/server.js";
import { readPng } from "../images/harness.js";

let sim: Simulator | null = null;
afterEach(async () => {
  await sim?.close();
  sim = null;
});

async function start(options: SimulatorOptions = {}): Promise<{ sim: Simulator; client: OpenAI }> {
  sim = await startSimulator({ seed: 3, ...options });
  return { sim, client: new OpenAI({ apiKey: "sk-sim", baseURL: `${sim.url}/v1`, maxRetries: 0 }) };
}

const AUTH = { authorization: "Bearer sk-sim", "content-type": "application/json" };

async function post(url: string, body: unknown, headers: Record<string, string> = AUTH) {
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

function creates(s: Simulator): OpenAiVideosReceived[] {
  return s.received
    .filter((r) => r.protocol === "openai-videos" && r.method === "POST" && r.path === "/v1/videos")
    .map((r) => r.body as OpenAiVideosReceived);
}

describe("the simulated OpenAI Videos API, through the official client", () => {
  it("creates, moves a video to completed over its steps, serves its files, remixes, lists and deletes", async () => {
    const { sim, client } = await start({ videos: { stepsToComplete: 3 } });
    const created = await client.videos.create({
      model: "sora-2",
      prompt: "a kite over dunes",
      seconds: "8",
      size: "1280x720",
    });
    expect(created).toMatchObject({
      object: "video",
      model: "sora-2",
      status: "queued",
      progress: 0,
      completed_at: null,
      expires_at: null,
      seconds: "8",
      size: "1280x720",
      error: null,
      remixed_from_video_id: null,
    });
    expect(created.id).toMatch(/^video_[0-9a-f]{32}$/);

    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await client.videos.retrieve(created.id));
    expect(seen.map((v) => [v.status, v.progress])).toEqual([
      ["in_progress", 33],
      ["in_progress", 66],
      ["completed", 100],
    ]);
    const done = seen[2]!;
    expect(done.completed_at).toBeGreaterThanOrEqual(created.created_at);
    expect(done.expires_at).toBe((done.completed_at as number) + 3600);

    const video = Buffer.from(await (await client.videos.downloadContent(created.id)).arrayBuffer());
    expect(video.equals(simVideoFile({ prompt: "a kite over dunes", seconds: "8", size: "1280x720" }, "video"))).toBe(
      true,
    );
    expect(video.toString("ascii", 4, 8)).toBe("ftyp");
    const thumbnail = await client.videos.downloadContent(created.id, { variant: "thumbnail" });
    expect(thumbnail.headers.get("content-type")).toBe("image/png");
    expect(readPng(Buffer.from(await thumbnail.arrayBuffer()))).toEqual({ width: 64, height: 36 });
    const sprites = await client.videos.downloadContent(created.id, { variant: "spritesheet" });
    expect(sprites.headers.get("content-type")).toBe("image/png");

    const remix = await client.videos.remix(created.id, { prompt: "the kite, at night" });
    expect(remix).toMatchObject({
      status: "queued",
      remixed_from_video_id: created.id,
      seconds: "8",
      size: "1280x720",
    });
    expect(remix.id).not.toBe(created.id);

    const newestFirst = [];
    for await (const v of client.videos.list({ limit: 1 })) newestFirst.push(v.id);
    expect(newestFirst).toEqual([remix.id, created.id]);
    const oldestFirst = await client.videos.list({ order: "asc" });
    expect(oldestFirst.data.map((v) => v.id)).toEqual([created.id, remix.id]);

    await expect(client.videos.delete(remix.id)).rejects.toMatchObject({ status: 400 }); // still queued
    expect(await client.videos.delete(created.id)).toEqual({ id: created.id, object: "video.deleted", deleted: true });
    await expect(client.videos.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    expect(creates(sim)[0]).toMatchObject({ encoding: "multipart", model: "sora-2", seconds: "8", reference: null });
  });

  it("records the reference image a create carried, its bytes and type, or its URL", async () => {
    const { sim, client } = await start();
    const image = Buffer.from("\x89PNG\r\n\x1a\nnot really an image, but bytes to compare", "latin1");
    await client.videos.create({
      prompt: "from a still",
      input_reference: await toFile(image, "still.png", { type: "image/png" }),
    });
    await client.videos.create({
      prompt: "from a link",
      input_reference: { image_url: "https://example.com/still.png" },
    });
    await post(`${sim.url}/v1/videos`, { prompt: "json link", input_reference: "https://example.com/b.webp" });
    const [file, link, jsonLink] = creates(sim);
    expect(file?.reference).toMatchObject({ kind: "file", contentType: "image/png", filename: "still.png" });
    expect(file?.reference?.kind === "file" && file.reference.bytes.equals(image)).toBe(true);
    expect(link?.reference).toEqual({ kind: "url", url: "https://example.com/still.png" });
    expect(jsonLink).toMatchObject({ encoding: "json", reference: { kind: "url", url: "https://example.com/b.webp" } });
  });

  it("answers ranges of the video with 206 and its Content-Range, and 416 past the end", async () => {
    const { sim, client } = await start({ videos: { stepsToComplete: 1 } });
    const { id } = await client.videos.create({ prompt: "ranges" });
    await client.videos.retrieve(id);
    const whole = simVideoFile({ prompt: "ranges", seconds: "4", size: "720x1280" }, "video");
    const url = `${sim.url}/v1/videos/${id}/content`;
    const part = await fetch(url, { headers: { authorization: "Bearer k", range: "bytes=10-99" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-99/${whole.length}`);
    expect(part.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(10, 100))).toBe(true);
    const tail = await fetch(url, { headers: { authorization: "Bearer k", range: "bytes=-16" } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 16))).toBe(true);
    const past = await fetch(url, { headers: { authorization: "Bearer k", range: `bytes=${whole.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${whole.length}`);
  });
});

describe("the simulated OpenAI Videos API's checks", () => {
  it("needs a bearer key, answering 401 in OpenAI's error shape", async () => {
    const { sim } = await start({ keys: ["sk-right"] });
    for (const headers of [{ "content-type": "application/json" }, { ...AUTH, authorization: "Bearer sk-wrong" }]) {
      const res = await post(`${sim.url}/v1/videos`, { prompt: "x" }, headers);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_api_key" });
    }
    expect((await fetch(`${sim.url}/v1/videos/video_x`)).status).toBe(401);
  });

  it.each([
    [{}, "prompt", "missing_required_parameter"],
    [{ prompt: 5 }, "prompt", "invalid_type"],
    [{ prompt: "p", seconds: 4 }, "seconds", "invalid_type"],
    [{ prompt: "p", seconds: "5" }, "seconds", "invalid_value"],
    [{ prompt: "p", size: "1920x1080" }, "size", "invalid_value"],
    [{ prompt: "p", model: "dall-e-3" }, "model", "invalid_value"],
    [{ prompt: "p", duration: "4" }, "duration", "unknown_parameter"],
    [{ prompt: "p", input_reference: "not a url" }, "input_reference", "invalid_value"],
  ])("refuses %j with a 400 naming %s", async (body, param, code) => {
    const { sim } = await start();
    const res = await post(`${sim.url}/v1/videos`, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "invalid_request_error", param, code });
    expect(res.body.error.message).toContain(param === "prompt" && code !== "invalid_type" ? "'prompt'" : "");
  });

  it("refuses a reference file that is not an image, naming input_reference", async () => {
    const { client } = await start();
    const pdf = await toFile(Buffer.from("%PDF-1.4"), "doc.pdf", { type: "application/pdf" });
    await expect(client.videos.create({ prompt: "p", input_reference: pdf })).rejects.toMatchObject({
      status: 400,
      param: "input_reference",
    });
  });

  it("answers content of a video not yet done, or an unknown variant, with a 400", async () => {
    const { sim, client } = await start();
    const { id } = await client.videos.create({ prompt: "early" });
    await expect(client.videos.downloadContent(id)).rejects.toMatchObject({ status: 400 });
    const res = await fetch(`${sim.url}/v1/videos/${id}/content?variant=poster`, { headers: AUTH });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.param).toBe("variant");
  });
});

describe("the simulated OpenAI Videos API's faults", () => {
  it("ends a [fail] video failed with a moderation-like error, and serves it no content", async () => {
    const { sim, client } = await start({ videos: { stepsToComplete: 1 } });
    const { id } = await client.videos.create({ prompt: "forbidden [fail]" });
    const failed = await client.videos.retrieve(id);
    expect(failed).toMatchObject({ status: "failed", completed_at: null, expires_at: null });
    expect(failed.error).toMatchObject({ code: "moderation_blocked" });
    await expect(client.videos.downloadContent(id)).rejects.toMatchObject({ status: 400 });
    expect(sim.usage.records.at(-1)).toMatchObject({ protocol: "openai-videos", task: { id, ends: "failure" } });
  });

  it("answers creates 500 or 429 by marker or forced outcome, creating nothing", async () => {
    const { sim, client } = await start();
    await expect(client.videos.create({ prompt: "x [error500]" })).rejects.toMatchObject({ status: 500 });
    await expect(client.videos.create({ prompt: "x [error429]" })).rejects.toMatchObject({ status: 429 });
    sim.state.options.videos = { outcome: "create-429" };
    await expect(client.videos.create({ prompt: "plain" })).rejects.toMatchObject({ status: 429 });
    expect((await client.videos.list()).data).toEqual([]);
    expect(sim.usage.records).toEqual([]);
  });

  it("answers the first N retrieves of a [poll500=N] video 500, then goes on; [poll500] never recovers", async () => {
    const { client } = await start({ videos: { stepsToComplete: 1 } });
    const twice = await client.videos.create({ prompt: "flaky [poll500=2]" });
    await expect(client.videos.retrieve(twice.id)).rejects.toMatchObject({ status: 500 });
    await expect(client.videos.retrieve(twice.id)).rejects.toMatchObject({ status: 500 });
    expect((await client.videos.retrieve(twice.id)).status).toBe("completed");
    const stuck = await client.videos.create({ prompt: "down [poll500]" });
    for (let i = 0; i < 5; i++) await expect(client.videos.retrieve(stuck.id)).rejects.toMatchObject({ status: 500 });
  });

  it("forgets a video forgetAfterMs after its end: retrieve and content answer 404", async () => {
    const { client } = await start({ videos: { stepsToComplete: 1, forgetAfterMs: 0 } });
    const { id } = await client.videos.create({ prompt: "fleeting" });
    const done = await client.videos.retrieve(id);
    expect(done.status).toBe("completed");
    expect(done.expires_at).toBe(done.completed_at);
    await expect(client.videos.retrieve(id)).rejects.toMatchObject({ status: 404 });
    await expect(client.videos.downloadContent(id)).rejects.toMatchObject({ status: 404 });
  });

  it("trickles a [slowcontent] video's bytes out in pieces, all of them", async () => {
    const { sim, client } = await start({ videos: { stepsToComplete: 1, slowContentMs: 40 } });
    const { id } = await client.videos.create({ prompt: "slow one [slowcontent]" });
    await client.videos.retrieve(id);
    const res = await fetch(`${sim.url}/v1/videos/${id}/content`, { headers: AUTH });
    const pieces: Uint8Array[] = [];
    for await (const piece of res.body as AsyncIterable<Uint8Array>) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(1);
    const whole = simVideoFile({ prompt: "slow one [slowcontent]", seconds: "4", size: "720x1280" }, "video");
    expect(Buffer.concat(pieces).equals(whole)).toBe(true);
  });

  it("logs each content download while it runs, and one its client cut as ended incomplete", async () => {
    const { sim, client } = await start({ videos: { stepsToComplete: 1 } });
    const { id } = await client.videos.create({ prompt: "cut short [slowcontent=2000]" });
    await client.videos.retrieve(id);
    const log = async () =>
      ((await (await fetch(`${sim.url}/simulator/videos/downloads`)).json()) as { downloads: VideoDownload[] })
        .downloads;
    const controller = new AbortController();
    const res = await fetch(`${sim.url}/v1/videos/${id}/content`, { headers: AUTH, signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect(await log()).toMatchObject([{ videoId: id, variant: "video", range: null, endedAt: null, complete: false }]);
    controller.abort();
    let entry = (await log())[0];
    for (let i = 0; i < 100 && entry?.endedAt === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      entry = (await log())[0];
    }
    expect(entry).toMatchObject({ complete: false });
    expect(entry?.endedAt).not.toBeNull();
  });

  it("decides the same ids and outcomes under the same seed", async () => {
    const outcomes = [];
    for (let round = 0; round < 2; round++) {
      const { client } = await start({ seed: 11, videos: { stepsToComplete: 1, failureRate: 0.5 } });
      const ends = [];
      for (let i = 0; i < 8; i++) {
        const { id } = await client.videos.create({ prompt: `v${i}` });
        ends.push(`${id}:${(await client.videos.retrieve(id)).status}`);
      }
      outcomes.push(ends);
      await sim?.close();
      sim = null;
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(new Set(outcomes[0]?.map((e) => e.split(":")[1]))).toEqual(new Set(["completed", "failed"]));
  });
});
