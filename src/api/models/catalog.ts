import type { Principal } from "../../auth/authenticator.js";
import type { ChannelType } from "../../core/channel.js";
import type { Channels } from "../../store/channels.js";
import type { PriceBook } from "../../store/prices.js";
import { CHAT_CHANNEL_TYPES } from "../chat/relay-deps.js";

const IMAGE_CHANNEL_TYPES: readonly ChannelType[] = ["gemini", "openai-images"];

/** What a token may call a model for. */
export type ModelUse = "chat" | "image" | "content";

/** What the model listings read: the channels serving each model and their prices. */
export interface ModelCatalogDeps {
  channels: Pick<Channels, "servedModels">;
  prices: Pick<PriceBook, "contentPrice" | "imagePrice">;
}

/**
 * The models a token may use, by name, with what for: a model is listed when an enabled channel
 * serves it to the caller's group, it has a price of the right kind, and the token's model list
 * (if any) names it. `content` is the Gemini-native surface (gemini channels with a token price).
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
  const chat = await deps.channels.servedModels(principal.group, CHAT_CHANNEL_TYPES);
  for (const [model, types] of chat) {
    if (!allowed(model) || !(await deps.prices.contentPrice(model))) continue;
    add(model, "chat");
    if (types.has("gemini")) add(model, "content");
  }
  const images = await deps.channels.servedModels(principal.group, IMAGE_CHANNEL_TYPES);
  for (const model of images.keys()) {
    if (allowed(model) && (await deps.prices.imagePrice(model)) !== null) add(model, "image");
  }
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
