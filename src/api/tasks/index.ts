import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";
import { installSurface } from "../surfaces.js";

/** Audio task surface: /audioa/... and /audiob/... (envelope shape). */
export async function taskRoutes(app: FastifyInstance, _opts: { ctx: GatewayContext }) {
  for (const family of ["audioa", "audiob"]) {
    await app.register(
      async (scope) => {
        installSurface(scope, "envelope");
      },
      { prefix: `/${family}` },
    );
  }
}
