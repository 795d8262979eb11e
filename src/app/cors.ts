import cors, { type FastifyCorsOptions, type FastifyCorsOptionsDelegateCallback } from "@fastify/cors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { REPLAYED_HEADER } from "../api/idempotent-route.js";
import { TASK_FAMILIES } from "../core/tasks/families.js";

/** Headers of the client API a browser app may read (besides the ones every browser shows). */
const EXPOSED = ["retry-after", "x-request-id", REPLAYED_HEADER, "content-range", "accept-ranges"];

/** The first path word of every client surface; the admin API, the console and the ops routes are not. */
function clientSurfacePrefixes(): string[] {
  return ["/v1/", "/v1beta/", "/video/", ...TASK_FAMILIES.map((family) => `/${family}/`)];
}

/**
 * Cross-origin access for browser apps, on when `cors.origins` lists any (off by default: a token
 * is a secret, and a page that holds one shows it to whoever opens it). Only the client API is
 * opened; a preflight from another origin, or to any other path, answers 404 without CORS headers,
 * so the browser refuses the call. No credentials (cookies) are ever allowed across origins.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const prefixes = clientSurfacePrefixes();
  const allowed: FastifyCorsOptions = {
    origin: origins.includes("*") ? "*" : [...origins],
    methods: ["GET", "POST", "DELETE"],
    // No allowedHeaders: the official clients send their own (x-stainless-*, anthropic-version...),
    // so a preflight allows the headers it asks for; the token still decides every call.
    exposedHeaders: EXPOSED,
    credentials: false,
    maxAge: 600,
  };
  const closed: FastifyCorsOptions = { origin: false };
  const delegate: FastifyCorsOptionsDelegateCallback = (request: FastifyRequest, callback) => {
    const path = request.url;
    callback(null, prefixes.some((prefix) => path.startsWith(prefix)) ? allowed : closed);
  };
  await app.register(cors, () => delegate);
}
