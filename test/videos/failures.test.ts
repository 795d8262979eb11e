import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { clientOf, eventually, ledgerRowsOf, startVideoEnv, TINY_PNG, untilEnded, type VideoEnv } from "./harness.js";

async function post(env: VideoEnv, key: string, path: string, body: string | FormData, contentType?: string) {
  const res = await fetch(`${env.gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, ...(contentType ? { "content-type": contentType } : {}) },
    body,
  });
  return { status: res.status, body: await res.json() };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`videos that fail, time out or are refused [${kind}]`, () => {
    let env: VideoEnv;
    beforeAll(async () => {
      env = await startVideoEnv(kind, {
        sim: { videos: { stepsToComplete: 3 } },
        config: { tasks: { timeoutSeconds: 2 }, videos: { referenceMaxBytes: 2048 } },
      });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("ends a video the upstream fails as failed with its reason, refunded exactly once", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const created = await client.videos.create({ prompt: "a storm [fail]", seconds: "12" });
      const failed = await untilEnded(client, created.id);
      expect(failed.status).toBe("failed");
      expect(failed.error?.message).not.toBe("");
      expect(failed.completed_at).toBeNull();
      const price = Math.round(0.1 * 12 * gw.gateway.ctx.config.quotaPerUnit);
      expect(await ledgerRowsOf(gw, user.userId, created.id)).toEqual([
        { kind: "refund", amount: price },
        { kind: "charge", amount: -price },
      ]);
      expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(10_000_000);
      await expect(client.videos.downloadContent(created.id)).rejects.toMatchObject({ status: 400 });
    });

    it("fails a video whose polls never succeed at the timeout, refunded once", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const created = await client.videos.create({ prompt: "never answers [poll500]" });
      const failed = await untilEnded(client, created.id);
      expect(failed.status).toBe("failed");
      expect(failed.error?.message).toContain("did not finish within 2 seconds");
      expect((await ledgerRowsOf(gw, user.userId, created.id)).map((r) => r.kind)).toEqual(["refund", "charge"]);
    });

    it("keeps no stored file of a video deleted while its files were being copied, and settles it", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const client = clientOf(gw, user.key);
      const dir = path.join(gw.dataDir, "blobs", "videos");
      const stored = () => {
        try {
          return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
        } catch {
          return 0;
        }
      };
      expect(stored()).toBe(0);
      // Each of its three files trickles out over 400 ms: the delete lands while they are copied.
      const created = await client.videos.create({ prompt: "copied slowly [slowcontent=400]" });
      await eventually(async () => env.sim.received.some((r) => r.path.includes("/content")));
      await client.videos.delete(created.id);
      let seen = 0;
      await eventually(async () => {
        seen = Math.max(seen, stored());
        return seen > 0;
      });
      await eventually(async () => stored() === 0);
      // The upstream made it (and bills it): the charge settles, though nothing of it is kept.
      const kinds = await eventually(async () => {
        const rows = (await ledgerRowsOf(gw, user.userId, created.id)).map((r) => r.kind);
        return rows.length > 1 ? rows : null;
      });
      expect(kinds).toEqual(["settle", "charge"]);
      const row = await gw.gateway.ctx.store.db
        .selectFrom("tasks")
        .select(["data", "result_url"])
        .where("task_id", "=", created.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ data: "{}", result_url: null });
    });

    it("refuses bad input with a 400 naming the param, charging nothing", async () => {
      const { gw } = env;
      const user = await gw.createUser({ quota: 10_000_000 });
      const json = (body: unknown) => post(env, user.key, "/v1/videos", JSON.stringify(body), "application/json");
      const cases: [Promise<{ status: number; body: any }>, string][] = [
        [json({ prompt: "x", seconds: "5" }), "seconds"],
        [json({ prompt: "x", size: "1x1" }), "size"],
        [json({ seconds: "4" }), "prompt"],
        [json({ prompt: "   " }), "prompt"],
        [json({ prompt: "x", model: "no-such-model" }), "model"],
        [json({ prompt: "x", input_reference: { image_url: "http://127.0.0.1:1/x.png" } }), "input_reference"],
        [json({ prompt: "x", input_reference: { file_id: "file_1" } }), "input_reference"],
      ];
      const big = new FormData();
      big.append("prompt", "too big a reference");
      big.append(
        "input_reference",
        new Blob([Buffer.concat([TINY_PNG, Buffer.alloc(4096)])], { type: "image/png" }),
        "r.png",
      );
      cases.push([post(env, user.key, "/v1/videos", big), "input_reference"]);
      const notImage = new FormData();
      notImage.append("prompt", "not an image");
      notImage.append("input_reference", new Blob([Buffer.from("hello")], { type: "image/png" }), "r.png");
      cases.push([post(env, user.key, "/v1/videos", notImage), "input_reference"]);
      const nul = new FormData();
      nul.append("prompt", "a \u0000 in the prompt");
      cases.push([post(env, user.key, "/v1/videos", nul), "prompt"]);
      for (const [answer, param] of cases) {
        const res = await answer;
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error).toMatchObject({ param, type: "invalid_request_error" });
      }
      const list = await fetch(`${gw.url}/v1/videos?limit=500`, { headers: { authorization: `Bearer ${user.key}` } });
      expect(list.status).toBe(400);
      expect(await gw.gateway.ctx.ledger.ledgerSum(user.userId)).toBe(10_000_000);
      expect((await clientOf(gw, user.key).videos.list()).data).toEqual([]);
    });

    it("answers another user's video id with a 404 on every route", async () => {
      const { gw } = env;
      const owner = await gw.createUser({ quota: 10_000_000 });
      const done = await untilEnded(
        clientOf(gw, owner.key),
        (await clientOf(gw, owner.key).videos.create({ prompt: "mine" })).id,
      );
      const stranger = await gw.createUser({ quota: 10_000_000 });
      const auth = { authorization: `Bearer ${stranger.key}` };
      const calls = [
        fetch(`${gw.url}/v1/videos/${done.id}`, { headers: auth }),
        fetch(`${gw.url}/v1/videos/${done.id}/content`, { headers: auth }),
        fetch(`${gw.url}/v1/videos/${done.id}/content?variant=thumbnail`, { headers: auth }),
        fetch(`${gw.url}/v1/videos/${done.id}`, { method: "DELETE", headers: auth }),
        fetch(`${gw.url}/v1/videos/${done.id}/remix`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ prompt: "x" }),
        }),
        fetch(`${gw.url}/v1/videos?after=${done.id}`, { headers: auth }),
      ];
      const answers = await Promise.all(calls);
      expect(answers.slice(0, 5).map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
      for (const r of answers.slice(0, 5)) expect(((await r.json()) as any).error.param).toBe("video_id");
      expect(answers[5]?.status).toBe(400);
      // The owner still has it.
      expect((await clientOf(gw, owner.key).videos.retrieve(done.id)).status).toBe("completed");
    });
  });
}
