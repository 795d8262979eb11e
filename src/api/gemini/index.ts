import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";
import { installSurface } from "../surfaces.js";

/** Gemini-native content surface under /v1beta (Google error shape). */
export async function geminiRoutes(app: FastifyInstance, _opts: { ctx: GatewayContext }) {
  installSurface(app, "google");
}
