import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";
import { installSurface } from "../surfaces.js";

/** OpenAI-compatible images surface under /v1 (OpenAI error shape). */
export async function imageRoutes(app: FastifyInstance, _opts: { ctx: GatewayContext }) {
  installSurface(app, "openai");
}
