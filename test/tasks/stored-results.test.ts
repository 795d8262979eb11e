import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simMediaFile } from "../../src/simulator/media-files.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { ledgerRowsOf, startTaskEnv, submit, type TaskEnv, waitForTask } from "./harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function musicTask(env: TaskEnv, key: string, family: "audioa" | "audiob", prompt = "[Verse] stored copies") {
  const sub = await submit(env.gw.url, key, family, "MUSIC", { prompt, tags: "lofi", title: "Kept" });
  expect(sub.status).toBe(200);
  return sub.body.data as string;
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`task results are the gateway's stored copies [${kind}]`, () => {
    let env: TaskEnv;
    beforeAll(async () => {
      env = await startTaskEnv(kind, {
        sim: { taskRelay: { completeAfterMs: 300 }, generateRecord: { completeAfterMs: 300 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("hands out gateway URLs whose downloads are the upstream's bytes with their content type", async () => {
      const { gw } = env;
      const user = await gw.createUser();
      for (const family of ["audioa", "audiob"] as const) {
        const taskId = await musicTask(env, user.key, family);
        const record = await waitForTask(gw.url, user.key, family, taskId);
        expect(record.status).toBe("SUCCESS");
        expect(record.result_url).toBe(record.data.clips[0].audio_url);
        for (const clip of record.data.clips) {
          expect(clip.audio_url.startsWith(`${gw.url}/${family}/files/`)).toBe(true);
          expect(clip.image_url.startsWith(`${gw.url}/${family}/files/`)).toBe(true);
          const audio = await download(clip.audio_url);
          expect(audio.status).toBe(200);
          expect(audio.headers.get("content-type")).toBe("audio/mpeg");
          expect(audio.headers.get("accept-ranges")).toBe("bytes");
          expect(audio.bytes.equals(simMediaFile(`${clip.clip_id}.mp3`)?.bytes as Buffer)).toBe(true);
          const image = await download(clip.image_url);
          expect(image.headers.get("content-type")).toBe("image/png");
          expect(image.bytes.equals(simMediaFile(`${clip.clip_id}.png`)?.bytes as Buffer)).toBe(true);
        }
      }
    });

    it("answers a Range request with the part asked for, and 416 past the end", async () => {
      const { gw } = env;
      const user = await gw.createUser();
      const taskId = await musicTask(env, user.key, "audioa");
      const record = await waitForTask(gw.url, user.key, "audioa", taskId);
      const clip = record.data.clips[0];
      const whole = simMediaFile(`${clip.clip_id}.mp3`)?.bytes as Buffer;

      const part = await download(clip.audio_url, { range: "bytes=10-99" });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes 10-99/${whole.length}`);
      expect(part.headers.get("content-length")).toBe("90");
      expect(part.bytes.equals(whole.subarray(10, 100))).toBe(true);

      const tail = await download(clip.audio_url, { range: "bytes=-16" });
      expect(tail.status).toBe(206);
      expect(tail.bytes.equals(whole.subarray(whole.length - 16))).toBe(true);

      const past = await download(clip.audio_url, { range: `bytes=${whole.length}-` });
      expect(past.status).toBe(416);
      expect(past.headers.get("content-range")).toBe(`bytes */${whole.length}`);

      const head = await fetch(clip.audio_url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(whole.length));

      const unknown = await download(`${gw.url}/audioa/files/${"x".repeat(40)}.mp3`);
      expect(unknown.status).toBe(404);
    });

    it("copies each file once, when the task finishes, not on every poll", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser();
      // Tasks finishing in the same poll are stored side by side.
      const taskIds = await Promise.all([1, 2, 3].map(() => musicTask(env, user.key, "audioa")));
      const records = await Promise.all(taskIds.map((id) => waitForTask(gw.url, user.key, "audioa", id)));
      await sleep(300); // more polls would have happened by now
      expect(records.map((r) => r.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
      const clipIds: string[] = records.flatMap((r) => r.data.clips.map((c: any) => c.clip_id));
      const served = sim.media.served.filter((p) => clipIds.some((id) => p.includes(id)));
      expect(served.sort()).toEqual(clipIds.flatMap((id) => [`/media/${id}.mp3`, `/media/${id}.png`]).sort());
    });

    it("keeps serving the files after the upstream has forgotten them", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser();
      const taskId = await musicTask(env, user.key, "audiob");
      const record = await waitForTask(gw.url, user.key, "audiob", taskId);
      const clip = record.data.clips[0];
      sim.state.options.media = { gone: true };
      try {
        expect((await download(`${sim.url}/media/${clip.clip_id}.mp3`)).status).toBe(404);
        const audio = await download(clip.audio_url);
        expect(audio.status).toBe(200);
        expect(audio.bytes.equals(simMediaFile(`${clip.clip_id}.mp3`)?.bytes as Buffer)).toBe(true);
      } finally {
        sim.state.options.media = {};
      }
    });

    it("retries a copy that fails until the files can be stored, and only then reports SUCCESS", async () => {
      const { gw, sim } = env;
      const user = await gw.createUser();
      sim.state.options.media = { gone: true };
      let taskId: string;
      try {
        taskId = await musicTask(env, user.key, "audioa");
        await sleep(900); // finished upstream, its files not downloadable
        const waiting = await waitForTask(gw.url, user.key, "audioa", taskId, () => true);
        expect(waiting.status).not.toBe("SUCCESS");
        expect(waiting.status).not.toBe("FAILURE");
      } finally {
        sim.state.options.media = {};
      }
      const record = await waitForTask(gw.url, user.key, "audioa", taskId);
      expect(record.status).toBe("SUCCESS");
      expect(record.data.clips[0].audio_url.startsWith(`${gw.url}/audioa/files/`)).toBe(true);
      expect(await ledgerRowsOf(gw, user.userId, taskId)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -50_000 },
      ]);
    });
  });
}

describe("a result file over the size bound", () => {
  let env: TaskEnv;
  beforeAll(async () => {
    env = await startTaskEnv("sqlite", {
      sim: { taskRelay: { completeAfterMs: 200 } },
      config: { tasks: { resultMaxBytes: 2048 } },
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it("fails the task at once, naming the bound, and refunds it", async () => {
    const { gw } = env;
    const user = await gw.createUser({ quota: 1_000_000 });
    const taskId = await musicTask(env, user.key, "audioa");
    const record = await waitForTask(gw.url, user.key, "audioa", taskId);
    expect(record.status).toBe("FAILURE");
    expect(record.fail_reason).toMatch(/result files could not be stored: .*audio_url.*2048 bytes/);
    expect(await gw.balance(user.userId)).toBe(1_000_000);
    expect((await ledgerRowsOf(gw, user.userId, taskId)).map((r) => r.kind).sort()).toEqual(["charge", "refund"]);
  });
});
