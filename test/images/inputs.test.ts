import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solidPng } from "../../src/simulator/gemini-image.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { dataUrl, generate, type ImageEnv, postImages, startImageEnv } from "./harness.js";

/** A local web server answering fixed content per path (an image host on loopback). */
async function startImageHost(routes: Record<string, { type: string; body: Buffer }>) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    const route = routes[req.url ?? ""];
    if (!route) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const small = solidPng(16, 16, [200, 10, 10]);

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`image inputs [${kind}]`, () => {
    let env: ImageEnv;
    let user: { userId: number; key: string };
    beforeAll(async () => {
      env = await startImageEnv(kind);
      user = await env.gw.createUser({ quota: 100_000_000 });
    });
    afterAll(async () => {
      await env?.close();
    });

    it("sends one data-URL image upstream as an inline part (image-to-image)", async () => {
      const before = env.geminiCalls().length;
      const answer = await generate(env.client(user.key), {
        model: "image-model-pro-1k",
        prompt: "make it blue",
        image: dataUrl(small),
      });
      expect(answer.data).toHaveLength(1);
      const call = env.geminiCalls()[before];
      expect(call?.inlineParts).toBe(1);
      expect(call?.inlineMimeTypes).toEqual(["image/png"]);
      expect(call?.prompt).toBe("make it blue");
    });

    it("blends three data-URL images: the upstream sees three inline parts", async () => {
      const before = env.geminiCalls().length;
      const images = [solidPng(8, 8, [1, 2, 3]), solidPng(9, 9, [4, 5, 6]), solidPng(10, 10, [7, 8, 9])].map((p) =>
        dataUrl(p),
      );
      const answer = await generate(env.client(user.key), {
        model: "image-model-2-1k",
        prompt: "blend",
        image: images,
      });
      expect(answer.data).toHaveLength(1);
      expect(env.geminiCalls()[before]?.inlineParts).toBe(3);
    });

    it("refuses raw base64 with a 400 that shows the expected data URL form", async () => {
      const balance = await env.gw.balance(user.userId);
      const res = await postImages(env.gw, user.key, {
        model: "image-model",
        prompt: "edit",
        image: small.toString("base64"),
      });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe("image");
      expect(res.body.error.message).toContain("raw base64");
      expect(res.body.error.message).toContain("data:image/png;base64,");
      const inArray = await postImages(env.gw, user.key, {
        model: "image-model",
        prompt: "edit",
        image: [dataUrl(small), small.toString("base64")],
      });
      expect(inArray.status).toBe(400);
      expect(inArray.body.error.param).toBe("image[1]");
      expect(await env.gw.balance(user.userId)).toBe(balance);
    });

    for (const address of ["127.0.0.1", "10.0.0.1", "169.254.169.254"]) {
      it(`refuses an image URL on ${address} by default, before any charge or upstream call`, async () => {
        const balance = await env.gw.balance(user.userId);
        const calls = env.sim.received.length;
        const res = await postImages(env.gw, user.key, {
          model: "image-model",
          prompt: "edit",
          image: `http://${address}/latest/meta-data/image.png`,
        });
        expect(res.status).toBe(400);
        expect(res.body.error.param).toBe("image");
        expect(res.body.error.message).toContain(address);
        expect(res.body.error.message).toContain("not allowed");
        expect(await env.gw.balance(user.userId)).toBe(balance);
        expect(env.sim.received.length).toBe(calls);
      });
    }

    it("refuses host names that resolve to loopback, and IPv6 loopback literals", async () => {
      const host = await startImageHost({ "/a.png": { type: "image/png", body: small } });
      try {
        const byName = await postImages(env.gw, user.key, {
          model: "image-model",
          prompt: "edit",
          image: [`http://localhost:${host.port}/a.png`],
        });
        expect(byName.status).toBe(400);
        expect(byName.body.error.param).toBe("image[0]");
        expect(byName.body.error.message).toContain("not allowed");
        const v6 = await postImages(env.gw, user.key, {
          model: "image-model",
          prompt: "e",
          image: "http://[::1]/a.png",
        });
        expect(v6.status).toBe(400);
        const mapped = await postImages(env.gw, user.key, {
          model: "image-model",
          prompt: "e",
          image: "http://[::ffff:7f00:1]/a.png",
        });
        expect(mapped.status).toBe(400);
        expect(host.hits).toEqual([]);
      } finally {
        await host.close();
      }
    });

    it("refuses more than 14 images", async () => {
      const res = await postImages(env.gw, user.key, {
        model: "image-model-2-1k",
        prompt: "blend",
        image: Array.from({ length: 15 }, () => dataUrl(small)),
      });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe("image");
      expect(res.body.error.message).toContain("at most 14");
    });

    it("refuses an image larger than the per-image limit", async () => {
      const big = Buffer.concat([small.subarray(0, 8), Buffer.alloc(80 * 1024, 7)]);
      const res = await postImages(env.gw, user.key, {
        model: "image-model",
        prompt: "edit",
        image: [dataUrl(small), dataUrl(big)],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe("image[1]");
      expect(res.body.error.message).toContain(String(64 * 1024));
    });

    it("refuses data URLs that are not PNG, JPEG or WebP images", async () => {
      const gif = await postImages(env.gw, user.key, {
        model: "image-model",
        prompt: "e",
        image: "data:image/gif;base64,R0lGODlh",
      });
      expect(gif.status).toBe(400);
      expect(gif.body.error.message).toContain("image/png");
      const text = await postImages(env.gw, user.key, {
        model: "image-model",
        prompt: "e",
        image: dataUrl(Buffer.from("hello, this is not an image at all")),
      });
      expect(text.status).toBe(400);
      expect(text.body.error.message).toContain("not a PNG, JPEG or WebP image");
    });

    const badBodies: Array<[string, unknown, string]> = [
      ["missing prompt", { model: "image-model" }, "prompt"],
      ["empty prompt", { model: "image-model", prompt: "  \n " }, "prompt"],
      ["prompt of the wrong type", { model: "image-model", prompt: 42 }, "prompt"],
      ["missing model", { prompt: "x" }, "model"],
      ["n as a string", { model: "image-model", prompt: "x", n: "2" }, "n"],
      ["n above 4", { model: "image-model", prompt: "x", n: 5 }, "n"],
      ["n beyond a safe integer", { model: "image-model", prompt: "x", n: 1e300 }, "n"],
      ["n at the largest safe integer", { model: "image-model", prompt: "x", n: 9007199254740991 }, "n"],
      ["image of the wrong type", { model: "image-model", prompt: "x", image: 5 }, "image"],
      [
        "image array with a number",
        { model: "image-model", prompt: "x", image: ["https://example.com/a.png", 1] },
        "image[1]",
      ],
      ["empty image array", { model: "image-model", prompt: "x", image: [] }, "image"],
      ["aspect_ratio of the wrong type", { model: "image-model", prompt: "x", aspect_ratio: 1.5 }, "aspect_ratio"],
      ["unknown response_format", { model: "image-model", prompt: "x", response_format: "png" }, "response_format"],
      ["unknown field", { model: "image-model", prompt: "x", colour: "red" }, "colour"],
      ["streaming", { model: "image-model", prompt: "x", stream: true }, "stream"],
      ["unknown model", { model: "dall-e-9", prompt: "x" }, "model"],
    ];
    for (const [name, body, param] of badBodies) {
      it(`answers 400 in the OpenAI shape naming the field: ${name}`, async () => {
        const res = await postImages(env.gw, user.key, body);
        expect(res.status).toBe(400);
        expect(res.body.error.type).toBe("invalid_request_error");
        expect(res.body.error.param).toBe(param);
        expect(res.body.error.message).toContain(param);
        expect(Object.keys(res.body.error).sort()).toEqual(["code", "message", "param", "type"]);
      });
    }

    it("names the unknown model in the message, through the official client", async () => {
      await expect(generate(env.client(user.key), { model: "dall-e-9", prompt: "x" })).rejects.toMatchObject({
        status: 400,
        error: { param: "model", message: expect.stringContaining('"dall-e-9"') },
      });
    });

    it("accepts size and quality for client compatibility without changing the tier", async () => {
      const before = env.geminiCalls().length;
      await env.client(user.key).images.generate({
        model: "image-model-pro-1k",
        prompt: "x",
        size: "1792x1024",
        quality: "hd",
      });
      expect(env.geminiCalls()[before]?.imageConfig).toEqual({ imageSize: "1K" });
    });
  });

  describe.skipIf(kind === "postgres" && !HAS_PG)(`image URLs with private addresses allowed [${kind}]`, () => {
    let env: ImageEnv;
    let host: Awaited<ReturnType<typeof startImageHost>>;
    let key: string;
    beforeAll(async () => {
      env = await startImageEnv(kind, { images: { allowPrivateUrls: true } });
      key = (await env.gw.createUser({ quota: 100_000_000 })).key;
      host = await startImageHost({
        "/photo.png": { type: "image/png", body: small },
        "/page.html": { type: "text/html", body: Buffer.from("<html></html>") },
        "/fake.png": { type: "image/png", body: Buffer.from("definitely not a png") },
        "/huge.png": { type: "image/png", body: Buffer.concat([small, Buffer.alloc(100 * 1024)]) },
      });
    });
    afterAll(async () => {
      await host?.close();
      await env?.close();
    });

    it("fetches a loopback image URL and sends it upstream inline", async () => {
      const before = env.geminiCalls().length;
      const answer = await generate(env.client(key), {
        model: "image-model",
        prompt: "restyle",
        image: [`${host.url}/photo.png`, dataUrl(small)],
      });
      expect(answer.data).toHaveLength(1);
      expect(host.hits).toContain("/photo.png");
      expect(env.geminiCalls()[before]).toMatchObject({ inlineParts: 2, inlineMimeTypes: ["image/png", "image/png"] });
    });

    it("refuses URLs that answer 404, a non-image content type, non-image bytes or too many bytes", async () => {
      const cases: Array<[string, string]> = [
        ["/missing.png", "404"],
        ["/page.html", "text/html"],
        ["/fake.png", "not a PNG, JPEG or WebP"],
        ["/huge.png", "too large"],
      ];
      for (const [path, expected] of cases) {
        const res = await postImages(env.gw, key, { model: "image-model", prompt: "x", image: `${host.url}${path}` });
        expect(res.status).toBe(400);
        expect(res.body.error.param).toBe("image");
        expect(res.body.error.message).toContain(expected);
      }
    });
  });
}
