import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config/load.js";
import { GatewayError } from "../../core/errors.js";
import { installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { type ModelCatalogDeps, modelsForToken } from "../model-catalog.js";
import { errorShapeOf } from "../route-table.js";
import { ModelList, ModelObject } from "./schemas.js";

/** Models are the gateway's own catalogue: one creation time for all (the listing has no other). */
const CREATED = 1_735_689_600;

function modelObject(id: string) {
  return { id, object: "model", created: CREATED, owned_by: "media-gateway" };
}

/** What the OpenAI model listing uses. */
export type ModelListDeps = TokenAuthDeps & ModelCatalogDeps & { config: Pick<Config, "bodies"> };

/** `GET /v1/models` and `/v1/models/{model}` in OpenAI's shape: exactly the models the token may use. */
export async function openAiModelRoutes(app: FastifyInstance, opts: { deps: ModelListDeps }) {
  const { deps } = opts;
  // The /v1 not-found answers belong to the images surface (same shape).
  installSurface(app, errorShapeOf(app.prefix), { notFound: false });
  app.addHook("onRequest", requireToken(deps));
  installInputBounds(app, deps.config.bodies.chat);

  app.get(
    "/models",
    { schema: { summary: "List the models the token may use", response: { 200: ModelList } } },
    async (request) => {
      const models = await modelsForToken(deps, principalOf(request));
      return { object: "list", data: [...models.keys()].map(modelObject) };
    },
  );

  app.get(
    "/models/:model",
    {
      schema: {
        summary: "Get one model the token may use",
        params: Type.Object({ model: Type.String({ minLength: 1 }) }),
        response: { 200: ModelObject },
      },
    },
    async (request) => {
      const { model } = request.params as { model: string };
      const models = await modelsForToken(deps, principalOf(request));
      if (!models.has(model)) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `The model '${model}' does not exist`, { param: "model" });
      }
      return modelObject(model);
    },
  );
}
