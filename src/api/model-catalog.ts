import type { Principal } from "../auth/authenticator.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { Channels } from "../store/channels.js";
import type { PriceBook } from "../store/prices.js";

/** What a token may call a model for. */
export type ModelUse = "chat" | "image" | "content" | "embeddings";

/** What the model listings read: the channels serving each model, what their types serve, and the prices. */
export interface ModelCatalogDeps {
  channels: Pick<Channels, "servedModels">;
  vendors: Pick<VendorRegistry, "serving">;
  prices: Pick<PriceBook, "contentPrice" | "imagePrice">;
}

/**
 * The models a token may use, by name, with what for: a model is listed when an enabled channel
 * serves it to the caller's group, it has a price of the right kind, and the token's model list
 * (if any) names it. `content` is the Gemini-native surface (channels of a type that serves
 * content, with a token price); `embeddings` the embedding routes of both shapes (channels of a
 * type that serves embeddings, with a token price).
 */
export async function modelsForToken(
  deps: ModelCatalogDeps,
  principal: Principal,
): Promise<Map<string, Set<ModelUse>>> {
  const allowed = (model: string) => principal.models === null || principal.models.includes(model);
  const out = new Map<string, Set<ModelUse>>();
  const add = (model: string, use: ModelUse) => {
    const set = out.get(model) ?? new Set<ModelUse>();
    set.add(use);
    out.set(model, set);
  };
  const chatTypes = deps.vendors.serving("chat");
  const contentTypes = deps.vendors.serving("content");
  const embeddingTypes = deps.vendors.serving("embeddings");
  const tokenTypes = [...new Set([...chatTypes, ...contentTypes, ...embeddingTypes])];
  const tokenModels = await deps.channels.servedModels(principal.group, tokenTypes);
  for (const [model, types] of tokenModels) {
    if (!allowed(model) || !(await deps.prices.contentPrice(model))) continue;
    if (chatTypes.some((t) => types.has(t))) add(model, "chat");
    if (contentTypes.some((t) => types.has(t))) add(model, "content");
    if (embeddingTypes.some((t) => types.has(t))) add(model, "embeddings");
  }
  const images = await deps.channels.servedModels(principal.group, deps.vendors.serving("images"));
  for (const model of images.keys()) {
    if (allowed(model) && (await deps.prices.imagePrice(model)) !== null) add(model, "image");
  }
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
