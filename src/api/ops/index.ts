import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";

/** /healthz (the process is up) and /readyz (the store answers). */
export async function opsRoutes(app: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  app.get("/healthz", { logLevel: "warn" }, async () => ({ status: "ok" }));
  app.get("/readyz", { logLevel: "warn" }, async (_request, reply) => {
    const store = await ctx.store.ping();
    if (!store) return reply.status(503).send({ status: "unavailable", store: "unreachable" });
    return { status: "ok", store: "ok", dialect: ctx.store.dialect };
  });
}
