import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASK_FAMILIES } from "../../src/core/tasks/families.js";
import { kindName, kindsOf } from "../../src/core/tasks/kinds.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { vendors } from "../../src/upstreams/registry.js";
import { ConsoleClient, createConsoleUser, TEST_PASSWORD_COST } from "../console/console-client.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { startTestBucket, type TestBucket } from "../support/s3.js";
import { eventually, submit, waitForTask } from "../tasks/harness.js";
import { TINY_PNG, untilEnded } from "../videos/harness.js";
import { type Receiver, startReceiver } from "../webhooks/receiver.js";

/**
 * Every URL the gateway hands its user (in a task record, an answer or a webhook) answers 200 with
 * content for that user: a finished task of every kind that produces files, in every family, the
 * videos with their three variants, and images, walked on each store and each blob store.
 */

/** A body for each action that produces files, naming the source clip (or upload) where it needs one. */
const ACTION_BODIES: Record<string, (family: string, clipId: string, uploadUrl: string) => Record<string, unknown>> = {
  MUSIC: (family) => (family === "audioa" ? { prompt: "[Verse]\nevery link works" } : { prompt: "every link works" }),
  EXTEND: (_f, clipId) => ({ clip_id: clipId, continue_at: 10, prompt: "[Bridge]\non and on" }),
  COVER: (_f, clipId) => ({ clip_id: clipId, prompt: "as a waltz", tags: "waltz", title: "Cover" }),
  ADD_INSTRUMENTAL: (_f, clipId) => ({ clip_id: clipId, tags: "strings", title: "Backed" }),
  ADD_VOCALS: (_f, clipId) => ({ clip_id: clipId, prompt: "[Verse]\nla la", tags: "soul", title: "Sung" }),
  VOCALS_SWAP: (_f, clipId) => ({ clip_id: clipId, prompt: "a deep baritone" }),
  STEMS: (_f, clipId) => ({ clip_id: clipId, kind: "vocals" }),
  WAV: (_f, clipId) => ({ clip_id: clipId }),
  MUSIC_VIDEO: (_f, clipId) => ({ clip_id: clipId }),
  UPLOAD: (_f, _c, uploadUrl) => ({ url: uploadUrl }),
};

/** The open kinds of a family whose results are files, as its channel's adapter can do them. */
function fileKindsOf(family: (typeof TASK_FAMILIES)[number], channelType: string): string[] {
  const adapter = vendors.of(channelType)?.tasks;
  return kindsOf(family)
    .filter((k) => !k.closedByDefault && k.results === "audio" && adapter?.kinds.includes(kindName(k)))
    .map((k) => k.action);
}

/** Every string under `value` that is a URL of the gateway. */
function gatewayUrls(value: unknown, base: string, into: Set<string>): Set<string> {
  if (typeof value === "string" && value.startsWith(`${base}/`)) into.add(value);
  else if (Array.isArray(value)) for (const v of value) gatewayUrls(v, base, into);
  else if (value && typeof value === "object") for (const v of Object.values(value)) gatewayUrls(v, base, into);
  return into;
}

/** The result fields of the clips of records and of image answers, wherever they sit. */
const RESULT_FIELDS = new Set(["result_url", "audio_url", "video_url", "image_url", "spritesheet_url", "url"]);

/** Every non-empty value of a result field under `value`. */
function resultValues(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) resultValues(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (RESULT_FIELDS.has(k) && typeof v === "string" && v !== "") into.push(v);
      else resultValues(v, into);
    }
  }
  return into;
}

interface Setup {
  name: string;
  store: StoreKind;
  bucket: boolean;
}

const SETUPS: Setup[] = [
  { name: "SQLite, local files", store: "sqlite", bucket: false },
  { name: "PostgreSQL, local files", store: "postgres", bucket: false },
  { name: "SQLite, an S3 bucket", store: "sqlite", bucket: true },
];

for (const setup of SETUPS) {
  describe.skipIf(setup.store === "postgres" && !HAS_PG)(
    `every URL handed out answers its owner [${setup.name}]`,
    () => {
      let sim: Simulator;
      let gw: TestGateway;
      let bucket: TestBucket | null = null;
      let receiver: Receiver;

      beforeAll(async () => {
        receiver = await startReceiver();
        if (setup.bucket) bucket = await startTestBucket();
        sim = await startSimulator({
          seed: 5,
          keys: ["sim-key"],
          taskRelay: { completeAfterMs: 100 },
          generateRecord: { completeAfterMs: 100 },
          videos: { stepsToComplete: 2 },
        });
        gw = await startTestGateway(setup.store, {
          logLevel: "warn",
          tasks: { pollIntervalMs: 40, maxPollIntervalMs: 300, workerTickMs: 20 },
          webhooks: { allowPrivateUrls: true, tickMs: 20, retryBaseMs: 50, maxAgeSeconds: 3600, timeoutMs: 5000 },
          uploads: { allowPrivateUrls: true },
          images: { allowPrivateUrls: true },
          console: { passwordCost: TEST_PASSWORD_COST },
          ...(bucket ? bucket.settings("proxy") : {}),
        });
        await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
        await gw.createChannel({ type: "generate-record", baseUrl: sim.url, models: ["audiob"] });
        await gw.createChannel({
          type: "openai-videos",
          baseUrl: sim.url,
          models: ["sora-2"],
          settings: { pollsPerSecond: 200 },
        });
        await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["image-model"] });
        await gw.createChannel({ type: "openai-images", baseUrl: sim.url, models: ["image-model-pro-1k"] });
      });
      afterAll(async () => {
        await gw?.close();
        await sim?.close();
        await bucket?.close();
        await receiver?.close();
      });

      it("walks the records, answers and webhooks of every family's file results and GETs each URL as the owner", async () => {
        const userId = await createConsoleUser(gw, "owner", { quota: 500_000_000 });
        const hook = await gw.admin("PUT", `/users/${userId}/webhook`, { url: `${receiver.url}/owner` });
        expect(hook.status).toBe(200);
        const token = await gw.admin("POST", `/users/${userId}/tokens`, { name: "walk" });
        const key = token.body.data.key as string;
        const session = new ConsoleClient(gw.url);
        expect((await session.login("owner")).status).toBe(200);
        const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

        // Everything the gateway said to its user, and the ids of what it made.
        const said: unknown[] = [];
        const taskIds: string[] = [];
        const run = async (family: string, action: string, body: Record<string, unknown>) => {
          const sub = await submit(gw.url, key, family, action, body);
          expect(sub.status, `${family} ${action}: ${JSON.stringify(sub.body)}`).toBe(200);
          said.push(sub.body);
          const record = await waitForTask(gw.url, key, family, sub.body.data);
          expect(record.status, `${family} ${action}: ${record.fail_reason}`).toBe("SUCCESS");
          taskIds.push(record.task_id);
          return record;
        };

        const walked: Record<string, string[]> = {};
        for (const family of TASK_FAMILIES) {
          const channelType = family === "audioa" ? "task-relay" : "generate-record";
          const actions = fileKindsOf(family, channelType);
          expect(actions).toEqual(expect.arrayContaining(["MUSIC", "STEMS", "WAV", "MUSIC_VIDEO", "UPLOAD"]));
          const source = await run(family, "MUSIC", ACTION_BODIES.MUSIC?.(family, "", "") ?? {});
          const clipId = source.data.clips[0].clip_id as string;
          walked[family] = ["MUSIC"];
          for (const action of actions.filter((a) => a !== "MUSIC")) {
            const bodyOf = ACTION_BODIES[action];
            if (!bodyOf) throw new Error(`no body for ${family} ${action}: add one, so its files are walked`);
            await run(family, action, bodyOf(family, clipId, `${sim.url}/media/walk.mp3`));
            walked[family]?.push(action);
          }
        }

        // Videos: a plain create, one with a reference image, and a remix; each ends completed.
        const videoIds: string[] = [];
        const plain = await client.videos.create({ prompt: "every link works", seconds: "4" });
        const referenced = await client.videos.create({
          prompt: "from a reference",
          input_reference: new File([TINY_PNG], "ref.png", { type: "image/png" }),
        });
        said.push(plain, referenced);
        for (const v of [plain, referenced]) {
          const done = await untilEnded(client, v.id);
          expect(done.status).toBe("completed");
          said.push(done);
          videoIds.push(v.id);
        }
        const remix = await client.videos.remix(plain.id, { prompt: "the same at night" });
        said.push(remix);
        expect((await untilEnded(client, remix.id)).status).toBe("completed");
        videoIds.push(remix.id);
        said.push(await client.videos.retrieve(remix.id), (await client.videos.list()).data);

        // Images, delivered inline (Gemini) and by URL (an OpenAI-compatible upstream).
        for (const model of ["image-model", "image-model-pro-1k"]) {
          const answer = await client.images.generate({ model, prompt: "a link that works" });
          expect(answer.data?.[0]?.url, model).toMatch(new RegExp(`^${gw.url}/v1/images/files/`));
          said.push(answer);
        }

        // The records as the owner reads them: the family fetches and the console (videos too).
        for (const family of TASK_FAMILIES) {
          const ids = taskIds.filter((id) => id.startsWith("task_"));
          const batch = await fetch(`${gw.url}/${family}/fetch`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ ids }),
          });
          said.push(await batch.json());
        }
        const records = await session.call("GET", "/console/api/me/tasks?limit=100");
        expect(records.status).toBe(200);
        expect(records.body.length).toBe(taskIds.length + videoIds.length);
        said.push(records.body);
        for (const id of videoIds) {
          const record = await session.call("GET", `/console/api/me/tasks/${id}`);
          expect(record.body.result_url, id).toMatch(new RegExp(`^${gw.url}/`));
          said.push(record.body);
        }
        said.push((await session.call("GET", "/console/api/me/images")).body);
        said.push((await session.call("GET", "/console/api/me/videos")).body);

        // The webhooks: one per ended task and video.
        const ended = taskIds.length + videoIds.length;
        await eventually(async () => receiver.deliveries.length >= ended);
        expect(receiver.deliveries).toHaveLength(ended);
        for (const d of receiver.deliveries) said.push(JSON.parse(d.body));

        // Every result the gateway hands out is its own URL, never the upstream's.
        const results = resultValues(said);
        expect(results.length).toBeGreaterThan(0);
        for (const url of results) expect(url, "a result URL").toMatch(new RegExp(`^${gw.url}/`));

        const urls = gatewayUrls(said, gw.url, new Set());
        // The videos' documented content routes, each variant.
        for (const id of videoIds) {
          for (const variant of ["video", "thumbnail", "spritesheet"]) {
            urls.add(`${gw.url}/v1/videos/${id}/content?variant=${variant}`);
          }
        }
        const paths = [...urls].map((u) => new URL(u).pathname);
        for (const area of ["/audioa/files/", "/audiob/files/", "/video/files/", "/v1/images/files/"]) {
          expect(
            paths.some((p) => p.startsWith(area)),
            area,
          ).toBe(true);
        }

        const answers: string[] = [];
        for (const url of urls) {
          const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
          const bytes = Buffer.from(await res.arrayBuffer());
          if (res.status !== 200 || bytes.length === 0) answers.push(`${res.status} ${bytes.length} bytes: ${url}`);
        }
        expect(answers).toEqual([]);
        expect(walked.audioa?.length).toBeGreaterThanOrEqual(5);
        expect(walked.audiob?.length).toBeGreaterThanOrEqual(5);
      });
    },
  );
}
