import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../core/errors.js";
import { installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { consoleAuthRoutes } from "./auth-routes.js";
import { consoleMeRedemptionRoutes } from "./me-redemption-routes.js";
import { consoleMeRoutes } from "./me-routes.js";
import { consoleMeTokenRoutes } from "./me-token-routes.js";
import { type ConsoleVideoDeps, consoleMeVideoRoutes } from "./me-video-routes.js";
import type { ConsoleRouteDeps } from "./route-deps.js";

export type { ConsoleRouteDeps };

/**
 * The console's own API under /console/api: sign-in, the session, self sign-up, invites and a
 * user's own data. Answers are never cached; a request made with a session must carry the
 * session's CSRF token in `x-csrf-token` for any state change (403 otherwise).
 */
export async function consoleApiRoutes(app: FastifyInstance, opts: { deps: ConsoleRouteDeps & ConsoleVideoDeps }) {
  const { deps } = opts;
  if (deps.config.console.passwordCost < 15) {
    app.log.warn(
      { passwordCost: deps.config.console.passwordCost },
      "CONSOLE_PASSWORD_COST is below 15: console passwords are hashed with a cost meant for tests only",
    );
  }
  installSurface(app, "console");
  // Every answer the document shows is described: by its route's summary unless it says more.
  app.addHook("onRoute", (route) => {
    const schema = route.schema as { summary?: string; response?: Record<string, { description?: string }> };
    for (const [code, answer] of Object.entries(schema?.response ?? {})) {
      if (code.startsWith("2") && !answer.description) {
        schema.response = { ...schema.response, [code]: { ...answer, description: schema.summary ?? "Done" } };
      }
    }
  });
  installInputBounds(app, deps.config.bodies.admin, { emptyBody: "undefined" });
  // JSON only: a cross-site form can post text/plain without a preflight, never JSON.
  app.removeContentTypeParser("text/plain");
  app.addHook("onRequest", async (request, reply) => {
    reply.header("cache-control", "no-store");
    const session = await deps.console.auth.sessionOf(request);
    if (session) deps.console.auth.assertCsrf(request, session);
  });
  await app.register(consoleAuthRoutes, { deps });
  await app.register(consoleMeRoutes, { deps });
  await app.register(consoleMeTokenRoutes, { deps });
  await app.register(consoleMeVideoRoutes, { deps });
  await app.register(consoleMeRedemptionRoutes, { deps });
  // The pages answer every other path under /console (deep links); an unknown API path is this
  // API's own 404, in its shape, never the pages' shell.
  app.all("/*", { schema: { hide: true } }, async (request) => {
    throw new GatewayError("GW_ERR_ROUTE_NOT_FOUND", `No route for ${request.method} ${request.url.split("?")[0]}.`);
  });
}
