import type { Channel, ChannelInput } from "../channel.js";
import { settingsFromApi } from "../channel-settings.js";
import { GatewayError } from "../errors.js";
import { assertSameIdentity, found, notFound, refused } from "./checks.js";
import type { AdminPorts, PriceKind } from "./ports.js";
import { priceInput } from "./price-body.js";
import {
  CHANNEL_WRITABLE,
  type ChannelPatch,
  type ChannelTypeView,
  type ChannelView,
  type CreateChannelInput,
  type GroupRatioInput,
  type GroupRatioView,
  PRICE_WRITABLE,
  type PricePatch,
  type PriceView,
  type SetPriceInput,
  writableFields,
} from "./shapes.js";
import { channelTypeViews, channelView, priceView } from "./views.js";

/** Channels, prices and group ratios as operators manage them, over HTTP and from the command line. */

function channelInput(b: Partial<CreateChannelInput>): Partial<ChannelInput> {
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
    keyRotation: b.key_rotation,
    tags: b.tags === undefined ? undefined : [...new Set(b.tags)],
    keys: b.keys,
  };
}

/** Every channel type: what it serves and the settings its calls read. */
export function listChannelTypes(s: Pick<AdminPorts, "vendors">): ChannelTypeView[] {
  return channelTypeViews(s.vendors);
}

export async function listChannels(s: AdminPorts): Promise<ChannelView[]> {
  return (await s.channels.list()).map(channelView);
}

/** The channel as stored, its key included (for its test); a 404 when there is none. */
export async function getChannel(s: AdminPorts, id: number): Promise<Channel> {
  return found(await s.channels.get(id), "channel", id);
}

export async function showChannel(s: AdminPorts, id: number): Promise<ChannelView> {
  return channelView(await getChannel(s, id));
}

export async function createChannel(s: AdminPorts, body: CreateChannelInput): Promise<ChannelView> {
  const channel = await s.channels.create(channelInput(body) as ChannelInput);
  await s.announce("channels");
  return channelView(channel);
}

/**
 * Applies the writable fields (and the key) of a body shaped like a GET answer. `auto_disabled`
 * is the gateway's to set: sent back unchanged it is ignored, asked for otherwise it is refused.
 */
export async function updateChannel(s: AdminPorts, id: number, body: ChannelPatch): Promise<ChannelView> {
  assertSameIdentity(body, { id });
  const current = await getChannel(s, id);
  const { status, ...writable } = writableFields(CHANNEL_WRITABLE, body);
  const fields: Partial<CreateChannelInput> = writable;
  if (body.key !== undefined) fields.key = body.key;
  if (status === "auto_disabled" && current.status !== "auto_disabled") {
    throw refused("status", "auto_disabled is set by the gateway; send enabled or disabled");
  }
  const patch = channelInput({ ...fields, status: status === "auto_disabled" ? undefined : status });
  const channel = await s.channels.update(id, {
    ...patch,
    statusReason: patch.status === "disabled" ? "disabled by operator" : undefined,
  });
  const changed = found(channel, "channel", id);
  await s.announce("channels");
  return channelView(changed);
}

export async function disableChannel(s: AdminPorts, id: number): Promise<ChannelView> {
  return updateChannel(s, id, { status: "disabled" });
}

/** Deletes a channel that no unfinished task is bound to (disable it and let them end first). */
export async function deleteChannel(s: AdminPorts, id: number): Promise<{ id: number; deleted: true }> {
  const outcome = found(await s.channels.remove(id), "channel", id);
  if (!outcome.deleted) {
    throw new GatewayError(
      "GW_ERR_CONFLICT",
      `Channel ${id} still serves ${outcome.unfinishedTasks} unfinished task(s); disable it and delete it once they end.`,
    );
  }
  await s.announce("channels");
  return { id, deleted: true };
}

export async function listPrices(s: AdminPorts): Promise<PriceView[]> {
  return (await s.prices.listPrices()).map(priceView);
}

export async function showPrice(s: AdminPorts, kind: PriceKind, name: string): Promise<PriceView> {
  return priceView(found(await s.prices.getPrice(kind, name), "price", `${kind}/${name}`));
}

/**
 * Creates or replaces a price, checked against its unit (see `priceInput`): rates not given are
 * empty (a token rate falls back; a price per unit is 0).
 */
export async function setPrice(s: AdminPorts, b: SetPriceInput): Promise<PriceView> {
  await s.prices.setPrice(priceInput(b));
  await s.announce("prices");
  return showPrice(s, b.kind, b.name);
}

/** Changes some fields of an existing price; the others keep their value. */
export async function updatePrice(s: AdminPorts, kind: PriceKind, name: string, body: PricePatch): Promise<PriceView> {
  assertSameIdentity(body, { kind, name });
  const current = await showPrice(s, kind, name);
  const b = writableFields(PRICE_WRITABLE, body);
  const unit = b.unit ?? current.unit;
  if (unit !== "tokens") return setPrice(s, { kind, name, unit, price: b.price ?? current.price });
  const { kind: _k, name: _n, unit: _u, price: _p, updated_at: _t, cached_ratio: _c, ...stored } = current;
  // A new cached ratio without a new cache-read rate replaces the stored cache-read rate.
  const { cache_read_per_million: storedRead, ...rates } = stored;
  const keepRead =
    b.cached_ratio !== undefined && b.cache_read_per_million === undefined
      ? {}
      : { cache_read_per_million: storedRead };
  return setPrice(s, { kind, name, unit, ...rates, ...keepRead, ...b, price: undefined });
}

/** Deletes a price: requests that need it are refused until a price is set again. */
export async function deletePrice(
  s: AdminPorts,
  kind: PriceKind,
  name: string,
): Promise<{ kind: PriceKind; name: string; deleted: true }> {
  if (!(await s.prices.deletePrice(kind, name))) throw notFound("price", `${kind}/${name}`);
  await s.announce("prices");
  return { kind, name, deleted: true };
}

export async function listGroupRatios(s: AdminPorts): Promise<GroupRatioView[]> {
  return s.prices.listGroupRatios();
}

export async function setGroupRatio(s: AdminPorts, group: string, body: GroupRatioInput): Promise<GroupRatioView> {
  assertSameIdentity(body, { group });
  await s.prices.setGroupRatio(group, body.ratio);
  await s.announce("prices");
  return { group, ratio: body.ratio };
}
