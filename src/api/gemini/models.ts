import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config/load.js";
import { GatewayError } from "../../core/errors.js";
import type { VendorRegistry } from "../../core/vendor-registry.js";
import type { Channels } from "../../store/channels.js";
import { principalOf } from "../auth-hook.js";
import { type ModelCatalogDeps, modelsForToken } from "../model-catalog.js";

const METHODS = ["generateContent", "streamGenerateContent", "countTokens"];

function modelResource(id: string, outputTokenLimit: number) {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: "001",
    displayName: id,
    description: `${id}, served by the gateway`,
    outputTokenLimit,
    supportedGenerationMethods: METHODS,
  };
}

const ModelResource = Type.Object(
  {
    name: Type.String({ examples: ["models/gemini-2.5-flash"] }),
    baseModelId: Type.String(),
    version: Type.String(),
    displayName: Type.String(),
    description: Type.String(),
    outputTokenLimit: Type.Integer(),
    supportedGenerationMethods: Type.Array(Type.String()),
  },
  { additionalProperties: true, description: "A model the token may call here" },
);

const ModelPage = Type.Object(
  { models: Type.Array(ModelResource), nextPageToken: Type.Optional(Type.String()) },
  { additionalProperties: true, description: "One page of the models the token may call here" },
);

const ListQuery = Type.Object(
  {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    pageToken: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** The models the token may call on this surface (gemini channels with a token price). */
async function contentModels(deps: ModelCatalogDeps, request: Parameters<typeof principalOf>[0]): Promise<string[]> {
  const models = await modelsForToken(deps, principalOf(request));
  return [...models.entries()].filter(([, uses]) => uses.has("content")).map(([id]) => id);
}

/**
 * `GET /v1beta/models` (paged with `pageSize` and `pageToken`) and `GET /v1beta/models/{model}`:
 * exactly the models the token may call here, as Google's Model resources.
 */
/** What the content surface's model routes use. */
export interface ContentModelDeps extends ModelCatalogDeps {
  config: Pick<Config, "content">;
}

export async function geminiModelRoutes(base: FastifyInstance, deps: ContentModelDeps) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const limit = deps.config.content.defaultMaxOutputTokens;
  app.get(
    "/models",
    {
      schema: {
        summary: "List models (Google's Model resources)",
        querystring: ListQuery,
        response: { 200: ModelPage },
      },
    },
    async (request) => {
      const ids = await contentModels(deps, request);
      const size = request.query.pageSize ?? 50;
      const start = request.query.pageToken ? Number.parseInt(request.query.pageToken, 10) : 0;
      if (!Number.isInteger(start) || start < 0) {
        throw new GatewayError("GW_ERR_VALIDATION", "pageToken is invalid", { param: "pageToken" });
      }
      const page = ids.slice(start, start + size);
      const next = start + size < ids.length ? String(start + size) : undefined;
      return { models: page.map((id) => modelResource(id, limit)), ...(next ? { nextPageToken: next } : {}) };
    },
  );

  app.get(
    "/models/:target",
    { schema: { summary: "Get one model (Google's Model resource)", response: { 200: ModelResource } } },
    async (request) => {
      const model = (request.params as { target: string }).target;
      if (!(await contentModels(deps, request)).includes(model)) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `models/${model} is not found for API version v1beta.`);
      }
      return modelResource(model, limit);
    },
  );
}

/** Refuses a model no content channel lists, in Google's words (a 404). */
export async function assertContentModel(
  deps: { channels: Pick<Channels, "isKnownModel">; vendors: Pick<VendorRegistry, "serving"> },
  model: string,
): Promise<void> {
  if (!(await deps.channels.isKnownModel(model, deps.vendors.serving("content")))) {
    throw new GatewayError("GW_ERR_NOT_FOUND", `models/${model} is not found for API version v1beta.`);
  }
}
