import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../auth/authenticator.js";
import { anthropicKey, bearerKey, googleKey } from "../auth/credentials.js";
import type { GatewayContext } from "../context.js";
import { GatewayError } from "../core/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated caller; set by the surface's auth hook. */
    principal: Principal | null;
  }
}

export type Carrier = "bearer" | "google" | "anthropic";

/** The surface a path belongs to, as a metrics label. */
function surfaceOf(url: string): string {
  if (url.startsWith("/v1beta/")) return "content";
  if (url.startsWith("/v1/chat/") || url.startsWith("/v1/messages")) return "chat";
  if (url.startsWith("/v1/")) return "images";
  if (url.startsWith("/audioa/") || url.startsWith("/audiob/")) return "tasks";
  return "other";
}

/** An onRequest hook that authenticates the caller with the surface's credential carriers. */
export function requireToken(ctx: GatewayContext, carrier: Carrier) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const key =
      carrier === "bearer" ? bearerKey(request) : carrier === "anthropic" ? anthropicKey(request) : googleKey(request);
    try {
      try {
        request.principal = await ctx.auth.authenticate(key, request.ip);
      } catch (err) {
        // A bad key counts against the client's address (as resolved through trusted proxies);
        // an address over the limit gets 429 for every bad key. A valid key is never slowed down,
        // whatever others behind the same address do.
        if (err instanceof GatewayError && err.status === 401) await ctx.limits.failAuthentication(request.ip);
        throw err;
      }
      await ctx.limits.consumeRequest(request.principal.tokenId);
    } catch (err) {
      if (err instanceof GatewayError && err.status === 429)
        ctx.metrics.rateLimited.inc({ surface: surfaceOf(request.url) });
      throw err;
    }
  };
}

/** The caller of a route that has the auth hook; throws if the hook is missing (a bug). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route has no auth hook");
  return request.principal;
}
