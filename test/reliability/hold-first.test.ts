import { readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solidPng } from "../../src/simulator/gemini-image.js";
import { mp3File } from "../../src/simulator/media.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { waitForTask } from "../tasks/harness.js";

/**
 * Nothing is fetched or stored for a request before its hold: on every surface that takes a file
 * by URL (or in its body), a request the balance, the token or a limit refuses makes no request
 * to the file's host and leaves no byte in the blob store; with enough balance the file is
 * fetched only after the hold, and a file that cannot be used refunds the hold once.
 */

const SONG = mp3File("held first");
const PHOTO = solidPng(8, 8, [200, 40, 40]);
const CHAT_MODEL = "chat-model";
const CHAT_PRICE = { inputPerMillion: 3, outputPerMillion: 15, cachedRatio: 0.1 };

interface Hit {
  path: string;
  /** The watched user's balance when the request reached the host. */
  balance: number | null;
}

/**
 * A loopback file host that records every request, and the watched user's balance at that moment.
 * It serves an MP3 for `.mp3`, a PNG for `.png`, and a 404 for anything else and under `/gone/`.
 */
async function startFileHost(gw: () => TestGateway) {
  const hits: Hit[] = [];
  let watched: number | null = null;
  const server = http.createServer((req, res) => {
    const url = req.url ?? "";
    const seen = watched === null ? Promise.resolve(null) : gw().balance(watched);
    void seen.then((balance) => {
      hits.push({ path: url, balance });
      if (url.startsWith("/gone/")) res.writeHead(404).end();
      else if (url.endsWith(".mp3")) res.writeHead(200, { "content-type": "audio/mpeg" }).end(SONG);
      else if (url.endsWith(".png")) res.writeHead(200, { "content-type": "image/png" }).end(PHOTO);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    hitsOf: (prefix: string) => hits.filter((h) => h.path.startsWith(prefix)),
    watch(userId: number | null) {
      watched = userId;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every file under the gateway's blob folders (task files, images, videos), temporary ones included. */
function storedFiles(gw: TestGateway): string[] {
  try {
    return readdirSync(path.join(gw.dataDir, "blobs"), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

async function post(
  gw: TestGateway,
  key: string,
  urlPath: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${gw.url}${urlPath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function postForm(gw: TestGateway, key: string, urlPath: string, form: FormData) {
  const res = await fetch(`${gw.url}${urlPath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The ledger rows of a user, oldest first. */
async function ledgerOf(gw: TestGateway, userId: number) {
  const rows = await gw.gateway.ctx.ledger.entries(userId, { limit: 1000 });
  return rows.map((r) => ({ kind: r.kind, amount: Number(r.amount), reference: r.reference })).reverse();
}

/** The user's task rows (any platform). */
async function taskRowsOf(gw: TestGateway, userId: number) {
  return gw.gateway.ctx.store.db
    .selectFrom("tasks")
    .select(["task_id", "status"])
    .where("user_id", "=", userId)
    .execute();
}

/** Waits until a video has ended (a guard, not a timing check). */
async function waitForVideo(gw: TestGateway, key: string, id: string) {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    const res = await fetch(`${gw.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const video = (await res.json()) as { status: string };
    if (video.status === "completed" || video.status === "failed") return video;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`video ${id} did not end`);
}

/** One request of each surface that takes a file, its file on the host under `prefix`. */
const SURFACES: Array<{
  name: string;
  send(gw: TestGateway, key: string, host: string, prefix: string): Promise<{ status: number; body: any }>;
  /** The refusal of a balance that does not cover the request, in the surface's own shape. */
  refused(body: any): string | undefined;
}> = [
  {
    name: "UPLOAD on audioa",
    send: (gw, key, host, prefix) => post(gw, key, "/audioa/submit/UPLOAD", { url: `${host}${prefix}/song.mp3` }),
    refused: (body) => body.code,
  },
  {
    name: "UPLOAD on audiob",
    send: (gw, key, host, prefix) => post(gw, key, "/audiob/submit/UPLOAD", { url: `${host}${prefix}/song.mp3` }),
    refused: (body) => body.code,
  },
  {
    name: "video create with an input_reference URL",
    send: (gw, key, host, prefix) =>
      post(gw, key, "/v1/videos", { prompt: "a harbour", input_reference: { image_url: `${host}${prefix}/ref.png` } }),
    refused: (body) => body.error?.code,
  },
  {
    name: "video create with an input_reference file",
    send(gw, key) {
      const form = new FormData();
      form.append("prompt", "a harbour");
      form.append("input_reference", new Blob([PHOTO], { type: "image/png" }), "ref.png");
      return postForm(gw, key, "/v1/videos", form);
    },
    refused: (body) => body.error?.code,
  },
  {
    name: "image generation with input images by URL",
    send: (gw, key, host, prefix) =>
      post(gw, key, "/v1/images/generations", {
        model: "image-model",
        prompt: "restyle",
        image: [`${host}${prefix}/a.png`, `${host}${prefix}/b.png`],
      }),
    refused: (body) => body.error?.code,
  },
  {
    name: "chat completion with an image_url part",
    send: (gw, key, host, prefix) =>
      post(gw, key, "/v1/chat/completions", {
        model: CHAT_MODEL,
        max_tokens: 16,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "what is this?" },
              { type: "image_url", image_url: { url: `${host}${prefix}/photo.png` } },
            ],
          },
        ],
      }),
    refused: (body) => body.error?.code,
  },
  {
    name: "Anthropic message with an image url block",
    send: (gw, key, host, prefix) =>
      post(
        gw,
        key,
        "/v1/messages",
        {
          model: CHAT_MODEL,
          max_tokens: 16,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "what is this?" },
                { type: "image", source: { type: "url", url: `${host}${prefix}/photo.png` } },
              ],
            },
          ],
        },
        { "anthropic-version": "2023-06-01" },
      ),
    refused: (body) => body.error?.type,
  },
];

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(
    `nothing is fetched or stored for a request before its hold [${kind}]`,
    () => {
      let sim: Simulator;
      let gw: TestGateway;
      let host: Awaited<ReturnType<typeof startFileHost>>;
      beforeAll(async () => {
        sim = await startSimulator({ seed: 5, keys: ["sim-key"], taskRelay: { completeAfterMs: 100 } });
        gw = await startTestGateway(kind, {
          logLevel: "warn",
          tasks: { pollIntervalMs: 50, maxPollIntervalMs: 300, workerTickMs: 20 },
          uploads: { allowPrivateUrls: true },
          images: { allowPrivateUrls: true },
        });
        host = await startFileHost(() => gw);
        await gw.gateway.ctx.prices.setPrice({ kind: "content", name: CHAT_MODEL, ...CHAT_PRICE });
        await gw.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
        await gw.createChannel({ type: "generate-record", baseUrl: sim.url, models: ["audiob"] });
        await gw.createChannel({ type: "openai-videos", baseUrl: sim.url, models: ["sora-2"] });
        await gw.createChannel({ type: "gemini", baseUrl: sim.url, models: ["image-model"] });
        await gw.createChannel({ type: "openai-chat", baseUrl: sim.url, models: [CHAT_MODEL] });
      });
      afterAll(async () => {
        await gw?.close();
        await sim?.close();
        await host?.close();
      });

      for (const [i, surface] of SURFACES.entries()) {
        it(`${surface.name}: a zero balance is refused as today, with no fetch and no stored byte`, async () => {
          const user = await gw.createUser({ quota: 0 });
          const prefix = `/zero-${i}`;
          const before = storedFiles(gw);
          const answers = await Promise.all(
            Array.from({ length: 3 }, () => surface.send(gw, user.key, host.url, prefix)),
          );
          for (const res of answers) {
            expect(res.status, JSON.stringify(res.body)).toBe(403);
            expect(surface.refused(res.body)).toMatch(/insufficient_quota|permission_error/);
          }
          expect(host.hitsOf(prefix)).toEqual([]);
          expect(storedFiles(gw)).toEqual(before);
          expect(await gw.balance(user.userId)).toBe(0);
          expect(await ledgerOf(gw, user.userId)).toEqual([]);
        });
      }

      it("an UPLOAD the token's quota limit, the in-flight limit or the rate limit refuses fetches and stores nothing", async () => {
        const before = storedFiles(gw);
        const capped = await gw.createUser({ quota: 10_000_000, token: { quotaLimit: 100 } });
        const overLimit = await post(gw, capped.key, "/audioa/submit/UPLOAD", { url: `${host.url}/capped/song.mp3` });
        expect(overLimit.status).toBe(403);
        expect(overLimit.body.code).toBe("token_quota_exceeded");

        const busy = await startTestGateway(kind, {
          logLevel: "warn",
          uploads: { allowPrivateUrls: true },
          limits: { tasksInFlightPerUser: 1, requestsPerMinute: 2 },
        });
        try {
          await busy.createChannel({ type: "task-relay", baseUrl: sim.url, models: ["audioa"] });
          const user = await busy.createUser({ quota: 10_000_000 });
          // One task of the user is unfinished (as if running): the limit is reached.
          await busy.gateway.ctx.store.db
            .updateTable("users")
            .set({ tasks_unfinished: 1 })
            .where("id", "=", user.userId)
            .execute();
          const inFlight = await post(busy, user.key, "/audioa/submit/UPLOAD", {
            url: `${host.url}/in-flight/song.mp3`,
          });
          expect(inFlight.status).toBe(429);
          expect(inFlight.body.message).toMatch(/unfinished tasks/);
          // The token's second request of the minute is its last; the third is refused for its rate.
          await post(busy, user.key, "/audioa/submit/UPLOAD", { url: `${host.url}/in-flight/again.mp3` });
          const limited = await post(busy, user.key, "/audioa/submit/UPLOAD", { url: `${host.url}/rate/song.mp3` });
          expect(limited.status).toBe(429);
          expect(limited.body.message).toMatch(/Too many requests for this token/);
          expect(host.hitsOf("/in-flight")).toEqual([]);
          expect(host.hitsOf("/rate")).toEqual([]);
          expect(storedFiles(busy)).toEqual([]);
          expect(await busy.balance(user.userId)).toBe(10_000_000);
        } finally {
          await busy.close();
        }
        expect(host.hitsOf("/capped")).toEqual([]);
        expect(storedFiles(gw)).toEqual(before);
        expect(await gw.balance(capped.userId)).toBe(10_000_000);
      });

      it("with enough balance, an UPLOAD's file is fetched after its hold, on both families", async () => {
        for (const family of ["audioa", "audiob"]) {
          const user = await gw.createUser({ quota: 1_000_000 });
          host.watch(user.userId);
          const res = await post(gw, user.key, `/${family}/submit/UPLOAD`, {
            url: `${host.url}/paid-${family}/song.mp3`,
          });
          host.watch(null);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          // The fetch saw the balance with the UPLOAD's price (0.01 = 5,000 quota) already held.
          expect(host.hitsOf(`/paid-${family}`)).toEqual([{ path: `/paid-${family}/song.mp3`, balance: 995_000 }]);
          const record = await waitForTask(gw.url, user.key, family, res.body.data);
          expect(record.status).toBe("SUCCESS");
          const copy = String(record.data.clips[0].audio_url);
          expect(copy).toContain(`/${family}/files/`);
          // The upstream was sent the stored copy.
          expect(storedFiles(gw).some((file) => file.endsWith(path.basename(copy)))).toBe(true);
        }
      });

      it("with enough balance, a video's reference URL and a chat image are fetched after the hold", async () => {
        const user = await gw.createUser({ quota: 10_000_000 });
        host.watch(user.userId);
        const video = await post(gw, user.key, "/v1/videos", {
          prompt: "a harbour",
          input_reference: { image_url: `${host.url}/paid-video/ref.png` },
        });
        expect(video.status, JSON.stringify(video.body)).toBe(200);
        // sora-2 at 0.1 a second, 4 seconds: 200,000 quota held before the fetch.
        expect(host.hitsOf("/paid-video")).toEqual([{ path: "/paid-video/ref.png", balance: 9_800_000 }]);
        const row = await gw.gateway.ctx.store.db
          .selectFrom("tasks")
          .select("request_body")
          .where("task_id", "=", video.body.id)
          .executeTakeFirstOrThrow();
        expect(JSON.parse(String(row.request_body)).input_reference).toEqual({
          source: "url",
          mime_type: "image/png",
          bytes: PHOTO.length,
        });

        // Ended before the next test counts the stored files: a completed video's files are stored.
        await waitForVideo(gw, user.key, video.body.id);
        const afterVideo = await gw.balance(user.userId);
        const chat = await SURFACES[5]?.send(gw, user.key, host.url, "/paid-chat");
        host.watch(null);
        expect(chat?.status, JSON.stringify(chat?.body)).toBe(200);
        const [hit] = host.hitsOf("/paid-chat");
        expect(hit?.balance).toBeLessThan(afterVideo);
      });

      it("a file that cannot be used after the hold refunds it once and leaves nothing stored or listed", async () => {
        const user = await gw.createUser({ quota: 1_000_000 });
        const before = storedFiles(gw);
        const upload = await post(gw, user.key, "/audioa/submit/UPLOAD", { url: `${host.url}/gone/song.mp3` });
        expect(upload.status).toBe(400);
        expect(upload.body).toMatchObject({ code: "invalid_request", data: null });
        expect(upload.body.message).toBe("body.url answered HTTP 404");
        const video = await post(gw, user.key, "/v1/videos", {
          prompt: "a harbour",
          input_reference: { image_url: `${host.url}/gone/ref.png` },
        });
        expect(video.status).toBe(400);
        expect(video.body.error).toMatchObject({ param: "input_reference", type: "invalid_request_error" });
        const chat = await SURFACES[5]?.send(gw, user.key, host.url, "/gone");
        expect(chat?.status).toBe(400);

        // Each file was asked for once, after a hold; each hold was refunded once.
        expect(host.hitsOf("/gone").map((h) => h.path)).toEqual(["/gone/song.mp3", "/gone/ref.png", "/gone/photo.png"]);
        const rows = await ledgerOf(gw, user.userId);
        const references = [...new Set(rows.filter((r) => r.kind !== "topup").map((r) => r.reference))];
        expect(references).toHaveLength(3);
        for (const reference of references) {
          const mine = rows.filter((r) => r.reference === reference);
          expect(mine.map((r) => r.kind)).toEqual(["charge", "refund"]);
          expect(mine[0]?.amount).toBe(-(mine[1]?.amount ?? 0));
        }
        expect(await gw.balance(user.userId)).toBe(1_000_000);
        expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(1_000_000);
        // The client was answered with the error: no task or video is left behind, and no file.
        expect(await taskRowsOf(gw, user.userId)).toEqual([]);
        expect(storedFiles(gw)).toEqual(before);
        const charges = await gw.gateway.ctx.store.db
          .selectFrom("charges")
          .select("state")
          .where("user_id", "=", user.userId)
          .execute();
        expect(charges.map((c) => c.state)).toEqual(["refunded", "refunded", "refunded"]);
      });
    },
  );
}
