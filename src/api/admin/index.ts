import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { adminKeyMatches } from "../../auth/admin-key.js";
import { bearerKey } from "../../auth/credentials.js";
import { GatewayError } from "../../core/errors.js";
import { installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { errorShapeOf } from "../route-table.js";
import type { AdminDeps } from "./admin-deps.js";
import { channelKeyAdminRoutes } from "./channel-keys.js";
import { channelAdminRoutes } from "./channels.js";
import { overviewAdminRoutes } from "./overview.js";
import { rateLimitAdminRoutes } from "./rate-limits.js";
import { recordAdminRoutes } from "./records.js";
import { redemptionAdminRoutes } from "./redemptions.js";
import { userAdminRoutes } from "./users.js";

/**
 * The operator API under /api/admin, authorised by the admin key (Bearer or x-admin-key) or by an
 * operator's console session (its state changes carrying the session's `x-csrf-token`). Other
 * operator routes (the console's invites and settings) are registered by the app in the same
 * scope, under the same authorisation.
 */
export async function adminRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const { deps } = opts;
  installSurface(app, errorShapeOf(app.prefix));
  installInputBounds(app, deps.config.bodies.admin);
  app.addHook("onRequest", async (request: FastifyRequest, _reply: FastifyReply) => {
    // Guessing the admin key is slowed like guessing tokens: a wrong key counts against the
    // address and, over the limit, is answered 429. The right key always passes.
    const header = request.headers["x-admin-key"];
    const presented = typeof header === "string" ? header : bearerKey(request);
    if (adminKeyMatches(presented, await deps.adminKeyHash())) return;
    const session = presented === null ? await deps.console.auth.sessionOf(request) : null;
    if (session?.role === "operator") return deps.console.auth.assertCsrf(request, session);
    if (session) throw new GatewayError("GW_ERR_FORBIDDEN", "The admin API is for operators.");
    await deps.limits.failAuthentication(request.ip);
    throw new GatewayError("GW_ERR_ADMIN_UNAUTHENTICATED");
  });
  await app.register(userAdminRoutes, { admin: deps.admin, lists: deps.operatorLists });
  await app.register(channelAdminRoutes, { admin: deps.admin, vendors: deps.vendors, lists: deps.operatorLists });
  await app.register(rateLimitAdminRoutes, { admin: deps.admin });
  await app.register(channelKeyAdminRoutes, { admin: deps.admin });
  await app.register(recordAdminRoutes, { lists: deps.operatorLists });
  await app.register(overviewAdminRoutes, { lists: deps.operatorLists });
  await app.register(redemptionAdminRoutes, { admin: deps.admin });
}
