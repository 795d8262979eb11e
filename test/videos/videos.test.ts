import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { clientOf, ledgerRowsOf, startVideoEnv, TINY_PNG, untilEnded, type VideoEnv } from "./harness.js";

/** The quota a sora-2 video of `seconds` costs at the default price (0.1 per second). */
function priceOf(env: VideoEnv, seconds: number): number {
  return Math.round(0.1 * seconds * env.gw.gateway.ctx.config.quotaPerUnit);
}

/** A loopback server answering one PNG, for reference images given by URL. */
async function imageServer() {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(TINY_PNG));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ref.png`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`the OpenAI Videos API with the official client [${kind}]`, () => {
    let env: VideoEnv;
    beforeAll(async () => {
      env = await startVideoEnv(kind, { sim: { videos: { stepsToComplete: 2 } } });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("creates a video, polls it to completed, charges seconds x price once, and serves the three files", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const created = await client.videos.create({ prompt: "a red kite", seconds: "8", size: "1280x720" });
      expect(created).toMatchObject({ object: "video", model: "sora-2", status: "queued", seconds: "8" });
      expect(created.id).toMatch(/^video_[A-Za-z0-9]{32}$/);
      const done = await untilEnded(client, created.id);
      expect(done).toMatchObject({ status: "completed", progress: 100, size: "1280x720", error: null });
      expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
      expect(done.expires_at).toBe((done.completed_at as number) + 24 * 3600);
      expect(await ledgerRowsOf(gw, user.userId, created.id)).toEqual([
        { kind: "settle", amount: 0 },
        { kind: "charge", amount: -priceOf(env, 8) },
      ]);
      // The id is the gateway's own: the upstream was polled under its own id, never this one.
      expect(env.sim.received.some((r) => r.method === "GET" && r.path.startsWith("/v1/videos/"))).toBe(true);
      expect(env.sim.received.some((r) => r.path.includes(created.id))).toBe(false);
      const source = { prompt: "a red kite", seconds: "8", size: "1280x720" };
      const types = { video: "video/mp4", thumbnail: "image/png", spritesheet: "image/png" } as const;
      for (const variant of ["video", "thumbnail", "spritesheet"] as const) {
        const res = await client.videos.downloadContent(created.id, { variant });
        expect(res.headers.get("content-type")).toBe(types[variant]);
        expect(Buffer.from(await res.arrayBuffer()).equals(simVideoFile(source, variant))).toBe(true);
      }
      const whole = simVideoFile(source, "video");
      const part = await fetch(`${gw.url}/v1/videos/${created.id}/content`, {
        headers: { authorization: `Bearer ${user.key}`, range: "bytes=10-99" },
      });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes 10-99/${whole.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(10, 100))).toBe(true);
    });

    it("remixes a completed video on the channel that made it, naming its source", async () => {
      const user = await env.gw.createUser({ quota: 10_000_000 });
      const client = clientOf(env.gw, user.key);
      const first = await untilEnded(client, (await client.videos.create({ prompt: "a boat", seconds: "4" })).id);
      const remix = await client.videos.remix(first.id, { prompt: "the boat at night" });
      expect(remix).toMatchObject({ remixed_from_video_id: first.id, seconds: "4", status: "queued" });
      const done = await untilEnded(client, remix.id);
      expect(done).toMatchObject({ status: "completed", remixed_from_video_id: first.id, prompt: "the boat at night" });
      expect(env.sim.received.some((r) => r.method === "POST" && /\/v1\/videos\/[^/]+\/remix$/.test(r.path))).toBe(
        true,
      );
      const other = await env.gw.createUser({ quota: 10_000_000 });
      await expect(clientOf(env.gw, other.key).videos.remix(first.id, { prompt: "mine now" })).rejects.toMatchObject({
        status: 404,
      });
    });

    it("lists a user's videos newest first, by pages with after, limit and order", async () => {
      const user = await env.gw.createUser({ quota: 10_000_000 });
      const client = clientOf(env.gw, user.key);
      const ids: string[] = [];
      for (const n of [1, 2, 3]) ids.push((await client.videos.create({ prompt: `list ${n}` })).id);
      const first = await client.videos.list({ limit: 2 });
      expect(first.data.map((v) => v.id)).toEqual([ids[2], ids[1]]);
      expect(first.has_more).toBe(true);
      const second = await client.videos.list({ limit: 2, after: ids[1] });
      expect(second.data.map((v) => v.id)).toEqual([ids[0]]);
      expect(second.has_more).toBe(false);
      const asc = await client.videos.list({ order: "asc" });
      expect(asc.data.map((v) => v.id)).toEqual(ids);
      const all: string[] = [];
      for await (const v of client.videos.list({ limit: 1 })) all.push(v.id);
      expect(all).toEqual([...ids].reverse());
      // Another user's list is their own.
      const other = await env.gw.createUser({ quota: 10_000_000 });
      expect((await clientOf(env.gw, other.key).videos.list()).data).toEqual([]);
    });

    it("deletes a completed video: gone from list and retrieve, its files removed, its charge kept", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const done = await untilEnded(client, (await client.videos.create({ prompt: "to delete" })).id);
      expect(await client.videos.delete(done.id)).toEqual({
        id: done.id,
        object: "video.deleted",
        deleted: true,
        charge: { state: "settled", quota: priceOf(env, 4), message: "The video had completed: its charge stands." },
      });
      await expect(client.videos.retrieve(done.id)).rejects.toMatchObject({ status: 404 });
      await expect(client.videos.downloadContent(done.id)).rejects.toMatchObject({ status: 404 });
      expect((await client.videos.list()).data).toEqual([]);
      const row = await gw.gateway.ctx.store.db
        .selectFrom("tasks")
        .select(["data", "files_removed_at"])
        .where("task_id", "=", done.id)
        .executeTakeFirstOrThrow();
      expect(Number(row.files_removed_at)).toBeGreaterThan(0);
      const key = String(JSON.parse(row.data).clips[0].video_url).split("/").pop() as string;
      expect(await gw.gateway.ctx.videoFiles.stat(key)).toBeNull();
      expect((await ledgerRowsOf(gw, user.userId, done.id)).map((r) => r.kind)).toEqual(["settle", "charge"]);
    });

    it("sends an input_reference file as multipart, and fetches an image_url through the guard", async () => {
      const user = await env.gw.createUser({ quota: 10_000_000 });
      const client = clientOf(env.gw, user.key);
      const withFile = await client.videos.create({
        prompt: "from a file",
        input_reference: new File([TINY_PNG], "ref.png", { type: "image/png" }),
      });
      expect((await untilEnded(client, withFile.id)).status).toBe("completed");
      const images = await imageServer();
      try {
        const withUrl = await fetch(`${env.gw.url}/v1/videos`, {
          method: "POST",
          headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
          body: JSON.stringify({ prompt: "from a url", input_reference: { image_url: images.url } }),
        });
        expect(withUrl.status).toBe(200);
        expect((await untilEnded(client, ((await withUrl.json()) as { id: string }).id)).status).toBe("completed");
      } finally {
        await images.close();
      }
      const sent = env.sim.received
        .filter((r) => r.method === "POST" && r.path === "/v1/videos")
        .map((r) => r.body as { prompt?: string; encoding?: string; reference?: Record<string, unknown> });
      for (const prompt of ["from a file", "from a url"]) {
        const body = sent.find((b) => b.prompt === prompt);
        expect(body?.encoding).toBe("multipart");
        // The image arrived whole, as a file part of its type.
        expect(body?.reference).toMatchObject({ kind: "file", contentType: "image/png" });
        expect(Buffer.from(body?.reference?.bytes as Buffer).equals(TINY_PNG)).toBe(true);
      }
    });

    it("answers one create per Idempotency-Key, charging once", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const headers = { "Idempotency-Key": "video-key-1" };
      const a = await client.videos.create({ prompt: "once" }, { headers });
      const b = await client.videos.create({ prompt: "once" }, { headers });
      expect(b.id).toBe(a.id);
      expect((await client.videos.list()).data.map((v) => v.id)).toEqual([a.id]);
      expect((await ledgerRowsOf(gw, user.userId, a.id)).filter((r) => r.kind === "charge")).toHaveLength(1);
    });
  });
}
