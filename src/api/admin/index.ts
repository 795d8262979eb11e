import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { adminKeyMatches } from "../../auth/admin-key.js";
import { bearerKey } from "../../auth/credentials.js";
import type { GatewayContext } from "../../context.js";
import { GatewayError } from "../../errors.js";
import { installSurface } from "../surfaces.js";
import { channelAdminRoutes } from "./channels.js";
import { userAdminRoutes } from "./users.js";

/** The operator API under /api/admin, authorised by the admin key (Bearer or x-admin-key). */
export async function adminRoutes(app: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  installSurface(app, "envelope");
  app.addHook("onRequest", async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers["x-admin-key"];
    const presented = typeof header === "string" ? header : bearerKey(request);
    if (!adminKeyMatches(presented, ctx.adminKeyHash)) throw new GatewayError("GW_ERR_ADMIN_UNAUTHENTICATED");
  });
  await app.register(userAdminRoutes, { ctx });
  await app.register(channelAdminRoutes, { ctx });
}
