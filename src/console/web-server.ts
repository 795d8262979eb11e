import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** The policy of the console's pages: no inline script or style, no eval, nothing from elsewhere. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

interface Asset {
  type: string;
  plain: Buffer;
  gzip: Buffer | null;
  brotli: Buffer | null;
}

interface Bundle {
  html: Buffer;
  assets: Map<string, Asset>;
}

/**
 * Where the built pages are: beside this module once compiled (dist/console), or in dist/console
 * of the checkout when the gateway runs from its sources.
 */
export function consoleAssetsDir(): string {
  const here = import.meta.dirname;
  if (existsSync(path.join(here, "index.html"))) return here;
  return path.resolve(here, "..", "..", "dist", "console");
}

function readOptional(file: string): Buffer | null {
  return existsSync(file) ? readFileSync(file) : null;
}

/** Reads index.html and the hashed assets once; null when the pages were never built. */
export function loadBundle(dir: string): Bundle | null {
  const index = path.join(dir, "index.html");
  const assetsDir = path.join(dir, "assets");
  if (!existsSync(index) || !existsSync(assetsDir)) return null;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(assetsDir)) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue;
    const file = path.join(assetsDir, name);
    assets.set(name, {
      type,
      plain: readFileSync(file),
      gzip: readOptional(`${file}.gz`),
      brotli: readOptional(`${file}.br`),
    });
  }
  return { html: readFileSync(index), assets };
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cross-origin-opener-policy", "same-origin");
}

/** The smallest encoding the client accepts (brotli, then gzip, then none). */
function encode(request: FastifyRequest, reply: FastifyReply, asset: Asset): Buffer {
  const accepted = String(request.headers["accept-encoding"] ?? "");
  reply.header("vary", "accept-encoding");
  if (asset.brotli !== null && /\bbr\b/.test(accepted)) {
    reply.header("content-encoding", "br");
    return asset.brotli;
  }
  if (asset.gzip !== null && /\bgzip\b/.test(accepted)) {
    reply.header("content-encoding", "gzip");
    return asset.gzip;
  }
  return asset.plain;
}

/**
 * The console's pages: the HTML shell at /console (and any path under it, so deep links load the
 * same page, which routes itself), the hashed script and style sheet under /console/assets/.
 * The console's API (/console/api/...) is registered by its own routes and is not served here.
 */
export async function consoleWebRoutes(app: FastifyInstance, opts: { dir?: string } = {}) {
  const dir = opts.dir ?? consoleAssetsDir();
  let bundle = loadBundle(dir);

  const sendShell = async (_request: FastifyRequest, reply: FastifyReply) => {
    // Built after the gateway started (a development checkout): picked up on the next page load.
    bundle ??= loadBundle(dir);
    securityHeaders(reply).header("cache-control", "no-cache");
    if (bundle === null) {
      return reply
        .code(503)
        .header("content-type", "text/plain; charset=utf-8")
        .send("The console's pages are not built: run npm run build.");
    }
    return reply
      .header("content-security-policy", CONSOLE_CSP)
      .header("content-type", "text/html; charset=utf-8")
      .send(bundle.html);
  };

  app.get("/console", { schema: { hide: true } }, sendShell);
  app.get("/console/", { schema: { hide: true } }, sendShell);
  app.get("/console/assets/:name", { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    bundle ??= loadBundle(dir);
    const asset = bundle?.assets.get(name);
    securityHeaders(reply);
    if (asset === undefined) {
      return reply.code(404).header("content-type", "text/plain; charset=utf-8").send("No such console asset.");
    }
    const body = encode(request, reply, asset);
    return reply
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("content-type", asset.type)
      .send(body);
  });
  // Deep links (/console/users/3, /console/invite/<token>) load the same shell; the API stays apart.
  app.get("/console/*", { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { "*": string })["*"];
    if (rest.startsWith("api/") || rest.startsWith("assets/")) {
      return reply.callNotFound();
    }
    return sendShell(request, reply);
  });
}
