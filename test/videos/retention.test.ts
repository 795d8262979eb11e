import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simVideoFile } from "../../src/simulator/openai-videos-content.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { clientOf, eventually, startVideoEnv, untilEnded, type VideoEnv } from "./harness.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(
    `stored video content outlives the upstream's copy and ends at the gateway's retention [${kind}]`,
    () => {
      let env: VideoEnv;
      beforeAll(async () => {
        env = await startVideoEnv(kind, {
          // The simulator forgets a video 1 s after it ends; the gateway keeps it 4 seconds.
          sim: { videos: { stepsToComplete: 1, forgetAfterMs: 1000 } },
          config: {
            videos: { retentionSeconds: 4, sweepIntervalMs: 50 },
            webhooks: { allowPrivateUrls: true, tickMs: 20, retryBaseMs: 50, maxAgeSeconds: 3600, timeoutMs: 5000 },
          },
        });
      });
      afterAll(async () => {
        await env?.close();
      });

      it("serves the content after the upstream forgot it, then the sweeper removes it and the content is a 404", async () => {
        const { gw } = env;
        const user = await gw.createUser({ quota: 10_000_000 });
        const client = clientOf(gw, user.key);
        const done = await untilEnded(client, (await client.videos.create({ prompt: "kept", seconds: "4" })).id);
        expect(done.status).toBe("completed");
        expect(done.expires_at).toBe((done.completed_at as number) + 4);
        // The upstream has forgotten the video: its own content route answers 404.
        const upstreamId = await gw.gateway.ctx.store.db
          .selectFrom("tasks")
          .select("upstream_id")
          .where("task_id", "=", done.id)
          .executeTakeFirstOrThrow();
        await eventually(async () => {
          const res = await fetch(`${env.sim.url}/v1/videos/${upstreamId.upstream_id}/content`, {
            headers: { authorization: "Bearer sim-key" },
          });
          await res.arrayBuffer();
          return res.status === 404;
        });
        const res = await client.videos.downloadContent(done.id);
        const expected = simVideoFile({ prompt: "kept", seconds: "4", size: "720x1280" }, "video");
        expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);

        const row = await eventually(async () => {
          const r = await gw.gateway.ctx.store.db
            .selectFrom("tasks")
            .selectAll()
            .where("task_id", "=", done.id)
            .executeTakeFirstOrThrow();
          return Number(r.files_removed_at) > 0 ? r : null;
        }, 10_000);
        const key = String(JSON.parse(row.data).clips[0].video_url).split("/").pop() as string;
        expect(await gw.gateway.ctx.videoFiles.stat(key)).toBeNull();
        const gone = await fetch(`${gw.url}/v1/videos/${done.id}/content`, {
          headers: { authorization: `Bearer ${user.key}` },
        });
        expect(gone.status).toBe(404);
        expect(((await gone.json()) as any).error.message).toContain("expired");
        // The object stays, with its expires_at.
        expect(await client.videos.retrieve(done.id)).toMatchObject({
          status: "completed",
          expires_at: done.expires_at,
        });
      });

      it("announces the end state to the user's webhook, carrying the video object", async () => {
        const bodies: string[] = [];
        const headers: http.IncomingHttpHeaders[] = [];
        const server = http.createServer((req, res) => {
          let text = "";
          req.on("data", (c) => {
            text += c;
          });
          req.on("end", () => {
            bodies.push(text);
            headers.push(req.headers);
            res.writeHead(200).end();
          });
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        try {
          const { gw } = env;
          const user = await gw.createUser({ quota: 10_000_000 });
          const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
          expect((await gw.admin("PUT", `/users/${user.userId}/webhook`, { url })).status).toBe(200);
          const client = clientOf(gw, user.key);
          const done = await untilEnded(client, (await client.videos.create({ prompt: "announced" })).id);
          const body = await eventually(async () => bodies.find((b) => b.includes(done.id)));
          expect(JSON.parse(body)).toMatchObject({
            type: "task.succeeded",
            data: { id: done.id, object: "video", status: "completed", prompt: "announced" },
          });
          expect(headers[0]?.["webhook-signature"]).toBeTruthy();
        } finally {
          await new Promise<void>((r) => server.close(() => r()));
        }
      });
    },
  );
}
