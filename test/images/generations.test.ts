import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findImageModel, IMAGE_MODELS } from "../../src/core/images/catalog.js";
import { pixelSize } from "../../src/core/images/pixel-size.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { fetchPng, generate, type ImageEnv, postImages, readPng, startImageEnv } from "./harness.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`image generation [${kind}]`, () => {
    let env: ImageEnv;
    let key: string;
    beforeAll(async () => {
      env = await startImageEnv(kind);
      key = (await env.gw.createUser({ quota: 100_000_000 })).key;
    });
    afterAll(async () => {
      await env?.close();
    });

    for (const model of IMAGE_MODELS) {
      it(`${model.name}: sends imageSize ${model.imageSize ?? "(none)"} and serves a PNG of the tier's size`, async () => {
        const before = env.geminiCalls().length;
        const answer = await generate(env.client(key), {
          model: model.name,
          prompt: "a red fox",
          aspect_ratio: "16:9",
        });
        const calls = env.geminiCalls().slice(before);
        expect(calls).toHaveLength(1);
        expect(calls[0]?.model).toBe(model.name);
        expect(calls[0]?.imageSize).toBe(model.imageSize ?? undefined);
        expect(calls[0]?.aspectRatio).toBe("16:9");
        expect(calls[0]?.responseModalities).toEqual(["TEXT", "IMAGE"]);
        expect(answer.data).toHaveLength(1);
        const url = answer.data?.[0]?.url ?? "";
        expect(url.startsWith(`${env.gw.url}/v1/images/files/`)).toBe(true);
        const png = await fetchPng(url);
        expect(png.contentType).toBe("image/png");
        expect({ width: png.width, height: png.height }).toEqual(pixelSize(model.imageSize, "16:9"));
      });
    }

    it("gives 1K 16:9 as 1344x768 and 4K 16:9 as 5376x3072", async () => {
      const one = await generate(env.client(key), { model: "image-model", prompt: "wide", aspect_ratio: "16:9" });
      expect(await fetchPng(one.data?.[0]?.url ?? "")).toMatchObject({ width: 1344, height: 768 });
      const four = await generate(env.client(key), {
        model: "image-model-pro-4k",
        prompt: "wide",
        aspect_ratio: "16:9",
      });
      expect(await fetchPng(four.data?.[0]?.url ?? "")).toMatchObject({ width: 5376, height: 3072 });
    });

    it("sends no aspect ratio (and no imageConfig for image-model) when aspect_ratio is omitted", async () => {
      const before = env.geminiCalls().length;
      await generate(env.client(key), { model: "image-model", prompt: "square by default" });
      await generate(env.client(key), { model: "image-model-pro-2k", prompt: "square by default" });
      const [fixed, pro] = env.geminiCalls().slice(before);
      expect(fixed?.imageConfig).toBeUndefined();
      expect(pro?.imageConfig).toEqual({ imageSize: "2K" });
      expect(pro?.imageConfig && "aspectRatio" in pro.imageConfig).toBe(false);
    });

    it("accepts 1:4, 4:1, 1:8 and 8:1 on the image-model-2 family", async () => {
      for (const ratio of ["1:4", "4:1", "1:8", "8:1"]) {
        const answer = await generate(env.client(key), {
          model: "image-model-2-0.5k",
          prompt: "tall",
          aspect_ratio: ratio,
        });
        const png = await fetchPng(answer.data?.[0]?.url ?? "");
        expect({ width: png.width, height: png.height }).toEqual(pixelSize("512", ratio));
      }
    });

    it("refuses the extra ratios on the other families with a 400 naming aspect_ratio", async () => {
      const before = env.geminiCalls().length;
      for (const model of ["image-model", "image-model-pro-1k", "image-model-pro-4k"]) {
        for (const ratio of ["1:4", "4:1", "1:8", "8:1"]) {
          const res = await postImages(env.gw, key, { model, prompt: "tall", aspect_ratio: ratio });
          expect(res.status).toBe(400);
          expect(res.body.error.param).toBe("aspect_ratio");
          expect(res.body.error.type).toBe("invalid_request_error");
          expect(res.body.error.message).toContain(ratio);
          expect(res.body.error.message).toContain("image-model-2-");
        }
      }
      const bad = await postImages(env.gw, key, { model: "image-model-2-1k", prompt: "x", aspect_ratio: "7:3" });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain("8:1");
      expect(env.geminiCalls().length).toBe(before);
    });

    it("matches a model name whatever its case: image-model-pro-2K works like image-model-pro-2k", async () => {
      const price = (await env.gw.gateway.ctx.prices.imagePrice("image-model-pro-2k")) ?? 0;
      for (const model of ["image-model-pro-2K", "IMAGE-MODEL-PRO-2K", "Image-Model-Pro-2k"]) {
        const user = await env.gw.createUser({ quota: 10_000_000, token: { models: ["image-model-pro-2k"] } });
        const before = env.geminiCalls().length;
        const answer = await generate(env.client(user.key), { model, prompt: "a red fox", aspect_ratio: "16:9" });
        const calls = env.geminiCalls().slice(before);
        expect(
          calls.map((c) => [c.model, c.imageSize]),
          model,
        ).toEqual([["image-model-pro-2k", "2K"]]);
        expect(await fetchPng(answer.data?.[0]?.url ?? "")).toMatchObject(pixelSize("2K", "16:9") ?? {});
        expect(10_000_000 - (await env.gw.balance(user.userId)), model).toBe(Math.ceil(price * 500_000));
      }
    });

    it("keeps a tier's own rules for a name in another case: ratios, mapped names, the token's models", async () => {
      const tall = await postImages(env.gw, key, { model: "IMAGE-MODEL-2-0.5K", prompt: "tall", aspect_ratio: "1:8" });
      expect(tall.status).toBe(200);
      const refused = await postImages(env.gw, key, {
        model: "Image-Model-Pro-1K",
        prompt: "tall",
        aspect_ratio: "1:8",
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe("aspect_ratio");

      const oai = await env.gw.createUser({ group: "oai" });
      const before = env.openAiCalls().length;
      await generate(env.client(oai.key), { model: "Image-Model-2-1K", prompt: "a lighthouse" });
      expect(env.openAiCalls()[before]?.model).toBe("vendor-image-2");

      const limited = await env.gw.createUser({ token: { models: ["image-model"] } });
      const forbidden = await postImages(env.gw, limited.key, { model: "IMAGE-MODEL-PRO-4K", prompt: "x" });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error.code).toBe("model_not_allowed");
      const unknown = await postImages(env.gw, key, { model: "IMAGE-MODEL-PRO-8K", prompt: "x" });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.param).toBe("model");
    });

    it("answers n images as base64 when response_format is b64_json", async () => {
      const before = env.geminiCalls().length;
      const answer = await env.client(key).images.generate({
        model: "image-model-pro-1k",
        prompt: "three boats",
        n: 3,
        response_format: "b64_json",
      });
      expect(answer.data).toHaveLength(3);
      for (const item of answer.data ?? []) {
        expect(item.url).toBeUndefined();
        expect(readPng(Buffer.from(item.b64_json ?? "", "base64"))).toEqual({ width: 1024, height: 1024 });
        expect(item.revised_prompt).toBe("three boats");
      }
      expect(env.geminiCalls().length - before).toBe(3);
    });

    it("answers n distinct URLs, each serving its image", async () => {
      const answer = await env.client(key).images.generate({ model: "image-model", prompt: "two kites", n: 2 });
      const urls = (answer.data ?? []).map((d) => d.url ?? "");
      expect(urls).toHaveLength(2);
      expect(new Set(urls).size).toBe(2);
      for (const url of urls) expect(await fetchPng(url)).toMatchObject({ width: 1024, height: 1024 });
      expect(typeof answer.created).toBe("number");
    });

    it("returns the normalized prompt as revised_prompt and sends that text upstream", async () => {
      const before = env.geminiCalls().length;
      const answer = await generate(env.client(key), {
        model: "image-model",
        prompt: "  a   cat\t on a mat \r\n\r\n\r\n\r\nat  night  ",
      });
      expect(answer.data?.[0]?.revised_prompt).toBe("a cat on a mat\n\nat night");
      expect(env.geminiCalls()[before]?.prompt).toBe("a cat on a mat\n\nat night");
    });

    it("serves an openai-images channel under its mapped model name and stores URL answers itself", async () => {
      const user = await env.gw.createUser({ group: "oai" });
      env.sim.state.options.openaiImages = { answerWith: "url" };
      try {
        const before = env.openAiCalls().length;
        const answer = await generate(env.client(user.key), {
          model: "image-model-2-1k",
          prompt: "a lighthouse",
          aspect_ratio: "4:3",
          n: 2,
        });
        const call = env.openAiCalls()[before];
        expect(call).toMatchObject({ model: "vendor-image-2", n: 2, aspectRatio: "4:3", responseFormat: "b64_json" });
        expect(answer.data).toHaveLength(2);
        for (const item of answer.data ?? []) {
          expect(item.url?.startsWith(`${env.gw.url}/v1/images/files/`)).toBe(true);
          expect(await fetchPng(item.url ?? "")).toMatchObject({ width: 1184, height: 864 });
        }
      } finally {
        env.sim.state.options.openaiImages = {};
      }
    });

    it("answers an unknown stored image key with 404 in the OpenAI shape", async () => {
      const res = await fetch(`${env.gw.url}/v1/images/files/${"A".repeat(40)}.png`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.type).toBe("not_found_error");
      const traversal = await fetch(`${env.gw.url}/v1/images/files/..%2F..%2Fgateway.sqlite`);
      expect(traversal.status).toBe(404);
    });

    it("requires a Bearer token and answers 401 in the OpenAI shape", async () => {
      const res = await postImages(env.gw, null, { model: "image-model", prompt: "x" });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: "authentication_error" });
      const wrong = await postImages(env.gw, "sk-wrong", { model: "image-model", prompt: "x" });
      expect(wrong.status).toBe(401);
    });

    it("refuses a model the token may not use with 403", async () => {
      const user = await env.gw.createUser({ token: { models: ["image-model"] } });
      const res = await postImages(env.gw, user.key, { model: "image-model-pro-4k", prompt: "x" });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("model_not_allowed");
      expect(findImageModel("image-model-pro-4k")).not.toBeNull();
    });

    it("writes one request-log row per call on the images surface", async () => {
      const user = await env.gw.createUser();
      await generate(env.client(user.key), { model: "image-model", prompt: "logged" });
      await postImages(env.gw, user.key, { model: "no-such-model", prompt: "logged" });
      await env.gw.gateway.ctx.requestLogs.flush();
      const rows = await env.gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .selectAll()
        .where("user_id", "=", user.userId)
        .orderBy("id")
        .execute();
      expect(rows.map((r) => [r.surface, r.model, Number(r.status)])).toEqual([
        ["images", "image-model", 200],
        ["images", "no-such-model", 400],
      ]);
      expect(Number(rows[0]?.quota)).toBeGreaterThan(0);
      expect(Number(rows[0]?.channel_id)).toBe(env.geminiChannelId);
    });
  });
}
