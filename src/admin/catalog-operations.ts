import type { Static } from "@sinclair/typebox";
import { PriceView, type SetPriceBody, type UpdatePriceBody } from "../contracts/admin.js";
import { writableFields } from "../contracts/common.js";
import type { ChannelInput } from "../core/channel.js";
import { settingsFromApi } from "../core/channel-settings.js";
import { GatewayError } from "../core/errors.js";
import type { PriceKind } from "../store/prices.js";
import { type AdminStores, assertSameIdentity, notFound } from "./admin-stores.js";
import {
  type ChannelTypeView,
  ChannelView,
  type CreateChannelBody,
  type UpdateChannelBody,
} from "./channel-contracts.js";
import { channelTypeViews } from "./channel-types.js";
import { channelView, priceView } from "./views.js";

/** Channels, prices and group ratios as operators manage them, over HTTP and from the command line. */

type ChannelFields = Partial<Static<typeof CreateChannelBody>>;

function channelInput(b: ChannelFields): Partial<ChannelInput> {
  return {
    name: b.name,
    type: b.type,
    baseUrl: b.base_url,
    key: b.key,
    models: b.models,
    modelMapping: b.model_mapping,
    groups: b.groups,
    priority: b.priority,
    weight: b.weight,
    priceRatio: b.price_ratio,
    status: b.status,
    settings: b.settings === undefined ? undefined : settingsFromApi(b.settings),
  };
}

/** Every channel type: what it serves and the settings its calls read. */
export function listChannelTypes(s: Pick<AdminStores, "vendors">): ChannelTypeView[] {
  return channelTypeViews(s.vendors);
}

export async function listChannels(s: AdminStores): Promise<ChannelView[]> {
  return (await s.channels.list()).map(channelView);
}

export async function showChannel(s: AdminStores, id: number): Promise<ChannelView> {
  const channel = await s.channels.get(id);
  if (!channel) throw notFound("channel", id);
  return channelView(channel);
}

export async function createChannel(s: AdminStores, body: Static<typeof CreateChannelBody>): Promise<ChannelView> {
  const channel = await s.channels.create(channelInput(body) as ChannelInput);
  await s.announce("channels");
  return channelView(channel);
}

/**
 * Applies the writable fields (and the key) of a body shaped like a GET answer. `auto_disabled`
 * is the gateway's to set: sent back unchanged it is ignored, asked for otherwise it is refused.
 */
export async function updateChannel(
  s: AdminStores,
  id: number,
  body: Static<typeof UpdateChannelBody>,
): Promise<ChannelView> {
  assertSameIdentity(body, { id });
  const current = await s.channels.get(id);
  if (!current) throw notFound("channel", id);
  const { status, ...fields }: Partial<Static<typeof UpdateChannelBody>> = writableFields(ChannelView, body);
  if (body.key !== undefined) fields.key = body.key;
  if (status === "auto_disabled") {
    if (current.status !== "auto_disabled") {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        "body.status auto_disabled is set by the gateway; send enabled or disabled",
        { param: "status" },
      );
    }
  }
  const patch = channelInput({ ...fields, status: status === "auto_disabled" ? undefined : status });
  const channel = await s.channels.update(id, {
    ...patch,
    statusReason: patch.status === "disabled" ? "disabled by operator" : undefined,
  });
  if (!channel) throw notFound("channel", id);
  await s.announce("channels");
  return channelView(channel);
}

export async function disableChannel(s: AdminStores, id: number): Promise<ChannelView> {
  return updateChannel(s, id, { status: "disabled" });
}

/** Deletes a channel that no unfinished task is bound to (disable it and let them end first). */
export async function deleteChannel(s: AdminStores, id: number): Promise<{ id: number; deleted: true }> {
  const outcome = await s.channels.remove(id);
  if (!outcome) throw notFound("channel", id);
  if (!outcome.deleted) {
    throw new GatewayError(
      "GW_ERR_CONFLICT",
      `Channel ${id} still serves ${outcome.unfinishedTasks} unfinished task(s); disable it and delete it once they end.`,
    );
  }
  await s.announce("channels");
  return { id, deleted: true };
}

export async function listPrices(s: AdminStores): Promise<PriceView[]> {
  return (await s.prices.listPrices()).map(priceView);
}

export async function showPrice(s: AdminStores, kind: PriceKind, name: string): Promise<PriceView> {
  const row = await s.prices.getPrice(kind, name);
  if (!row) throw notFound("price", `${kind}/${name}`);
  return priceView(row);
}

/** Creates or replaces a price: fields not given take their defaults (0, cached ratio 1). */
export async function setPrice(s: AdminStores, b: Static<typeof SetPriceBody>): Promise<PriceView> {
  await s.prices.setPrice({
    kind: b.kind,
    name: b.name,
    price: b.price,
    inputPerMillion: b.input_per_million,
    outputPerMillion: b.output_per_million,
    cachedRatio: b.cached_ratio,
  });
  await s.announce("prices");
  return showPrice(s, b.kind, b.name);
}

/** Changes some fields of an existing price; the others keep their value. */
export async function updatePrice(
  s: AdminStores,
  kind: PriceKind,
  name: string,
  body: Static<typeof UpdatePriceBody>,
): Promise<PriceView> {
  assertSameIdentity(body, { kind, name });
  const current = await showPrice(s, kind, name);
  const b = writableFields(PriceView, body);
  return setPrice(s, {
    kind,
    name,
    price: b.price ?? current.price,
    input_per_million: b.input_per_million ?? current.input_per_million,
    output_per_million: b.output_per_million ?? current.output_per_million,
    cached_ratio: b.cached_ratio ?? current.cached_ratio,
  });
}

/** Deletes a price: requests that need it are refused until a price is set again. */
export async function deletePrice(
  s: AdminStores,
  kind: PriceKind,
  name: string,
): Promise<{ kind: PriceKind; name: string; deleted: true }> {
  if (!(await s.prices.deletePrice(kind, name))) throw notFound("price", `${kind}/${name}`);
  await s.announce("prices");
  return { kind, name, deleted: true };
}

export async function setGroupRatio(
  s: AdminStores,
  group: string,
  body: { group?: string; ratio: number },
): Promise<{ group: string; ratio: number }> {
  assertSameIdentity(body, { group });
  await s.prices.setGroupRatio(group, body.ratio);
  await s.announce("prices");
  return { group, ratio: body.ratio };
}
