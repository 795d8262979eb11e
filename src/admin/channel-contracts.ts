import type { Static } from "@sinclair/typebox";
import { channelContracts } from "../contracts/admin.js";
import { channelTypeContract } from "../contracts/channel-types.js";
import { ChannelSettingsApiSchema } from "../core/channel-settings.js";
import { CAPABILITIES } from "../core/vendor-adapter.js";
import { vendors } from "../upstreams/registry.js";

/**
 * The contracts that depend on what this gateway knows: a channel's type is one of the vendor
 * registry's, its settings are the ones core defines, a type's capabilities are core's. The other
 * admin contracts are used as they are (src/contracts/).
 */
export const { channelWritable, ChannelView, CreateChannelBody, UpdateChannelBody } = channelContracts(
  vendors.types,
  ChannelSettingsApiSchema,
);
export type ChannelView = Static<typeof ChannelView>;

/** The channel types this gateway knows, in the registry's order. */
export const CHANNEL_TYPES: readonly string[] = vendors.types;

export const ChannelTypeView = channelTypeContract(CAPABILITIES);
export type ChannelTypeView = Static<typeof ChannelTypeView>;
