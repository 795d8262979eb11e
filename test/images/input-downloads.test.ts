import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solidPng } from "../../src/simulator/gemini-image.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { type ImageEnv, postImages, startImageEnv } from "./harness.js";

const KB = 1024;
/** A real PNG padded to `size` bytes (the signature decides the type). */
const pngOf = (size: number) => {
  const png = solidPng(8, 8, [10, 20, 30]);
  return Buffer.concat([png, Buffer.alloc(size - png.length)]);
};

/**
 * An image host on loopback that counts every request. `/held.png` sends its first 80 KiB at once
 * and the rest only when `finishHeld` is called, so a request can be kept holding bytes.
 */
async function startImageHost() {
  const hits: string[] = [];
  const image = pngOf(60 * KB);
  const held = pngOf(100 * KB);
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url === "/held.png") {
      res.writeHead(200, { "content-type": "image/png", "content-length": String(held.length) });
      res.write(held.subarray(0, 80 * KB));
      void finished.then(() => res.end(held.subarray(80 * KB)));
      return;
    }
    res.writeHead(200, { "content-type": "image/png" }).end(image);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    finishHeld: () => finish(),
    close: () => {
      finish();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The gateway's gauge of input-image bytes in memory. */
async function bytesHeld(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^gateway_image_input_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`input image downloads [${kind}]`, () => {
    let env: ImageEnv;
    let host: Awaited<ReturnType<typeof startImageHost>>;
    beforeAll(async () => {
      host = await startImageHost();
      env = await startImageEnv(kind, {
        images: {
          allowPrivateUrls: true,
          maxImageBytes: 128 * KB,
          fetchMaxBytesPerRequest: 150 * KB,
          fetchMaxBytesInFlight: 170 * KB,
        },
      });
    });
    afterAll(async () => {
      await env?.close();
      await host?.close();
    });

    it("fetches nothing for a token whose balance does not cover the request", async () => {
      const { key, userId } = await env.gw.createUser({ quota: 0 });
      const answers = await Promise.all(
        Array.from({ length: 3 }, () =>
          postImages(env.gw, key, {
            model: "image-model",
            prompt: "restyle",
            image: Array.from({ length: 14 }, (_, i) => `${host.url}/photo-${i}.png`),
          }),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe("insufficient_quota");
      }
      expect(host.hits).toEqual([]);
      expect(await env.gw.balance(userId)).toBe(0);
    });

    it("refuses images over the per-request byte limit with a 400 naming the field and refunds the hold", async () => {
      const { key, userId } = await env.gw.createUser({ quota: 100_000_000 });
      const res = await postImages(env.gw, key, {
        model: "image-model",
        prompt: "blend",
        image: [`${host.url}/a.png`, `${host.url}/b.png`, `${host.url}/c.png`],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toMatch(/^image\[[0-2]\]$/);
      expect(res.body.error.message).toContain("together");
      expect(await env.gw.balance(userId)).toBe(100_000_000);
      expect(await bytesHeld(env.gw.url)).toBe(0);
    });

    it("refuses a request with 503 and Retry-After while other requests hold the instance's bytes, refunding it", async () => {
      const { key, userId } = await env.gw.createUser({ quota: 100_000_000 });
      // The first request holds 80 KiB of a download that has not finished.
      const first = postImages(env.gw, key, { model: "image-model", prompt: "one", image: `${host.url}/held.png` });
      for (let i = 0; i < 200 && (await bytesHeld(env.gw.url)) < 80 * KB; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await bytesHeld(env.gw.url)).toBeGreaterThanOrEqual(80 * KB);

      // 80 + 60 + 60 KiB would pass the instance's 170 KiB: the second request is refused.
      const second = await fetch(`${env.gw.url}/v1/images/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "image-model",
          prompt: "two",
          image: [`${host.url}/x.png`, `${host.url}/y.png`],
        }),
      });
      expect(second.status).toBe(503);
      expect(second.headers.get("retry-after")).toBe("5");
      const body = (await second.json()) as { error: { type: string; code: string; param: string } };
      expect(body.error).toMatchObject({ type: "server_error", code: "busy" });
      expect(body.error.param).toMatch(/^image\[[01]\]$/);

      host.finishHeld();
      expect((await first).status).toBe(200);
      // Only the first request is paid; every byte is given back once the requests end.
      const price = 100_000_000 - (await env.gw.balance(userId));
      const third = await postImages(env.gw, key, {
        model: "image-model",
        prompt: "three",
        image: `${host.url}/z.png`,
      });
      expect(third.status).toBe(200);
      expect(100_000_000 - (await env.gw.balance(userId))).toBe(2 * price);
      expect(await bytesHeld(env.gw.url)).toBe(0);
    });
  });
}
