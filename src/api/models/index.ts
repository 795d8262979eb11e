import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { GatewayContext } from "../../context.js";
import { GatewayError } from "../../errors.js";
import { principalOf, requireToken } from "../auth-hook.js";
import { sendError, toGatewayError } from "../surfaces.js";
import { modelsForToken } from "./catalog.js";

/** Models are the gateway's own catalogue: one creation time for all (the listing has no other). */
const CREATED = 1_735_689_600;

function modelObject(id: string) {
  return { id, object: "model", created: CREATED, owned_by: "media-gateway" };
}

/** `GET /v1/models` and `/v1/models/{model}` in OpenAI's shape: exactly the models the token may use. */
export async function openAiModelRoutes(app: FastifyInstance, opts: { ctx: GatewayContext }) {
  const { ctx } = opts;
  app.setErrorHandler((error, request, reply) => {
    const gw = toGatewayError(error);
    if (gw.errorName === "GW_ERR_INTERNAL") request.log.error({ err: error }, "unhandled error");
    if (reply.sent || reply.raw.headersSent) return;
    return sendError(reply, "openai", gw);
  });
  app.addHook("onRequest", requireToken(ctx, "bearer"));

  app.get("/models", { schema: { summary: "List the models the token may use" } }, async (request) => {
    const models = await modelsForToken(ctx, principalOf(request));
    return { object: "list", data: [...models.keys()].map(modelObject) };
  });

  app.get(
    "/models/:model",
    {
      schema: {
        summary: "Get one model the token may use",
        params: Type.Object({ model: Type.String({ minLength: 1 }) }),
      },
    },
    async (request) => {
      const { model } = request.params as { model: string };
      const models = await modelsForToken(ctx, principalOf(request));
      if (!models.has(model)) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `The model '${model}' does not exist`, { param: "model" });
      }
      return modelObject(model);
    },
  );
}
