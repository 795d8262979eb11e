import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole } from "../../../scripts/build-console.mjs";
import { CONSOLE_CSP, consoleWebRoutes } from "../../../src/console/web-server.js";

/** How the pages are served: the shell, hashed and precompressed assets, and their headers. */
describe("console pages over HTTP", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mg-console-"));
  let app: FastifyInstance;
  let script = "";
  let style = "";

  beforeAll(async () => {
    buildConsole({ outDir: dir, force: true });
    app = Fastify();
    await app.register(consoleWebRoutes, { dir });
    await app.ready();
    const html = (await app.inject({ url: "/console" })).body;
    script = /\/console\/assets\/(app-[0-9a-f]{12}\.js)/.exec(html)?.[1] ?? "";
    style = /\/console\/assets\/(app-[0-9a-f]{12}\.css)/.exec(html)?.[1] ?? "";
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers the shell at /console and every page path under it, never cached, with the policy", async () => {
    for (const url of ["/console", "/console/", "/console/users/7", "/console/me/tasks/task_x"]) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.body).toContain('<div id="app">');
      // No inline script or style in the shell: only the two hashed files.
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    }
    expect(script).not.toBe("");
    expect(style).not.toBe("");
  });

  it("serves the hashed files for a year, brotli or gzip as accepted, the same bytes each way", async () => {
    const plain = await app.inject({ url: `/console/assets/${script}`, headers: { "accept-encoding": "identity" } });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const br = await app.inject({
      url: `/console/assets/${script}`,
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("accept-encoding");
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    const gz = await app.inject({ url: `/console/assets/${style}`, headers: { "accept-encoding": "gzip" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(gunzipSync(gz.rawPayload).toString()).toContain(".layout");
    expect(br.rawPayload.length).toBeLessThan(250 * 1024);
  });

  it("answers 404 for an unknown asset, a path out of the folder, and the API's paths", async () => {
    for (const url of [
      "/console/assets/app-000000000000.js",
      "/console/assets/..%2Findex.html",
      "/console/assets/app.js.br",
    ]) {
      expect((await app.inject({ url })).statusCode).toBe(404);
    }
    expect((await app.inject({ url: "/console/api/anything" })).statusCode).toBe(404);
  });

  it("answers 503 naming the build when the pages were never built", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "mg-console-empty-"));
    const bare = Fastify();
    await bare.register(consoleWebRoutes, { dir: empty });
    const res = await bare.inject({ url: "/console" });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain("npm run build");
    await bare.close();
    rmSync(empty, { recursive: true, force: true });
  });
});
