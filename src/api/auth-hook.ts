import type { FastifyReply, FastifyRequest } from "fastify";
import type { Authenticator, Principal } from "../auth/authenticator.js";
import { anthropicKey, bearerKey, googleKey } from "../auth/credentials.js";
import { GatewayError } from "../core/errors.js";
import type { RateLimits } from "../limits/rate-limits.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import { routeAreaOf } from "./route-table.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated caller; set by the surface's auth hook. */
    principal: Principal | null;
  }
}

export type Carrier = "bearer" | "google" | "anthropic";

/** What the token check uses. */
export interface TokenAuthDeps {
  auth: Authenticator;
  limits: RateLimits;
  metrics: Pick<GatewayMetrics, "rateLimited">;
}

/** The token carrier of a URL's area in the route table. */
function carrierOf(url: string): Carrier {
  const auth = routeAreaOf(url)?.auth;
  if (auth === "bearer" || auth === "google" || auth === "anthropic") return auth;
  throw new Error(`the route table gives ${url} no token carrier`);
}

/**
 * An onRequest hook that authenticates the caller with the token carrier the route table gives
 * the request's path (or the given one).
 */
export function requireToken(deps: TokenAuthDeps, carrier?: Carrier) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const by = carrier ?? carrierOf(request.url);
    const key = by === "bearer" ? bearerKey(request) : by === "anthropic" ? anthropicKey(request) : googleKey(request);
    try {
      try {
        request.principal = await deps.auth.authenticate(key, request.ip);
      } catch (err) {
        // A bad key counts against the client's address (as resolved through trusted proxies);
        // an address over the limit gets 429 for every bad key. A valid key is never slowed down,
        // whatever others behind the same address do.
        if (err instanceof GatewayError && err.status === 401) await deps.limits.failAuthentication(request.ip);
        throw err;
      }
      await deps.limits.consumeRequest(request.principal.tokenId);
    } catch (err) {
      if (err instanceof GatewayError && err.status === 429)
        deps.metrics.rateLimited.inc({ surface: routeAreaOf(request.url)?.surface ?? "other" });
      throw err;
    }
  };
}

/** The caller of a route that has the auth hook; throws if the hook is missing (a bug). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route has no auth hook");
  return request.principal;
}
