import { randomUUID } from "node:crypto";
import type { Static, TObject } from "@sinclair/typebox";
import { invalidIpEntry } from "../auth/authenticator.js";
import type { Config } from "../config/load.js";
import type {
  CreatedTokenView,
  CreatedUserView,
  CreateTokenBody,
  CreateUserBody,
  GroupRatioView,
  PriceView,
  SetGroupRatioBody,
  SetPriceBody,
  TokenView,
  TopUpBody,
  UpdatePriceBody,
  UpdateTokenBody,
  UpdateUserBody,
  UserView,
} from "../contracts/admin.js";
import { channelContracts } from "../contracts/admin.js";
import { channelTypeContract } from "../contracts/channel-types.js";
import type { LedgerEntryView } from "../contracts/records.js";
import type {
  GenerateBatchBody,
  RedemptionBatchView,
  RedemptionCodeView,
  RedemptionView,
} from "../contracts/redemptions.js";
import type { AdminPorts } from "../core/admin/ports.js";
import type * as codes from "../core/admin/redemption-codes.js";
import type * as core from "../core/admin/shapes.js";
import { ChannelSettingsApiSchema } from "../core/channel-settings.js";
import type { RedemptionResult } from "../core/redemptions/redeem.js";
import { CAPABILITIES } from "../core/vendor-adapter.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { ChangeTopic } from "../events/change-bus.js";
import type { Channels } from "../store/channels.js";
import type { Ledger } from "../store/ledger.js";
import type { PriceBook } from "../store/prices.js";
import type { RateLimitRules } from "../store/rate-limits.js";
import type { Tokens } from "../store/tokens.js";
import type { Users } from "../store/users.js";
import { vendors } from "../upstreams/registry.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import { assertWebhookTarget } from "../webhooks/target.js";

/** The stores and settings the operator's use cases are wired from. */
export interface AdminParts {
  users: Users;
  tokens: Tokens;
  channels: Channels;
  prices: PriceBook;
  rateLimitRules: RateLimitRules;
  ledger: Ledger;
  vendors: VendorRegistry;
  /** Batches of redemption codes (the store's RedemptionCodes). */
  redemptions: AdminPorts["redemptions"];
  config: Pick<Config, "webhooks" | "quotaPerUnit">;
  announce(topic: ChangeTopic): Promise<void>;
}

/** The ports of core's admin use cases over the store's classes. */
export function adminPorts(parts: AdminParts): AdminPorts {
  const allowPrivate = parts.config.webhooks.allowPrivateUrls;
  return {
    users: parts.users,
    tokens: parts.tokens,
    channels: parts.channels,
    prices: parts.prices,
    rateLimits: parts.rateLimitRules,
    ledger: parts.ledger,
    vendors: parts.vendors,
    redemptions: parts.redemptions,
    quotaPerUnit: parts.config.quotaPerUnit,
    announce: (topic) => parts.announce(topic),
    checkWebhookTarget: (url, field) => assertWebhookTarget(url, { allowPrivate }, field),
    invalidIpEntry,
    newWebhookSecret,
    newTopUpReference: () => `topup:${randomUUID()}`,
  };
}

/**
 * The channel contracts of this gateway: a channel's type is one of the vendor registry's, its
 * settings are the ones core defines, a type's capabilities are core's (the pages use the open
 * form of src/contracts/). The admin API builds the same from the registry it is given.
 */
export const { ChannelView, CreateChannelBody, UpdateChannelBody } = channelContracts(
  vendors.types,
  ChannelSettingsApiSchema,
);
export const ChannelTypeView = channelTypeContract(CAPABILITIES);
/** The channel types this gateway knows, in the registry's order. */
export const CHANNEL_TYPES: readonly string[] = vendors.types;

// The contracts are what HTTP, the command line and the pages validate with; core declares its
// own types. These lines fail to compile when the two drift apart: every view core answers is a
// valid contract view, every body a contract accepts is what core takes, and the fields core
// changes are exactly those the contracts do not mark read-only.

/** Compiles only when A and B are each assignable to the other. */
type Agree<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The fields of a view's schema not marked read-only. */
type WritableOf<V extends TObject> = {
  [K in keyof V["properties"]]: V["properties"][K] extends { readOnly: true } ? never : K;
}[keyof V["properties"]];
type Writable<L extends readonly string[]> = L[number];

const agreement: Record<string, true> = {
  userView: true satisfies Agree<core.UserView, Static<typeof UserView>>,
  createdUserView: true satisfies Agree<core.CreatedUserView, Static<typeof CreatedUserView>>,
  createUser: true satisfies Agree<core.CreateUserInput, Static<typeof CreateUserBody>>,
  updateUser: true satisfies Agree<core.UserPatch, Static<typeof UpdateUserBody>>,
  topUp: true satisfies Agree<core.TopUpInput, Static<typeof TopUpBody>>,
  tokenView: true satisfies Agree<core.TokenView, Static<typeof TokenView>>,
  createdTokenView: true satisfies Agree<core.CreatedTokenView, Static<typeof CreatedTokenView>>,
  createToken: true satisfies Agree<core.CreateTokenInput, Static<typeof CreateTokenBody>>,
  updateToken: true satisfies Agree<core.TokenPatch, Static<typeof UpdateTokenBody>>,
  channelView: true satisfies Agree<core.ChannelView, Static<typeof ChannelView>>,
  createChannel: true satisfies Agree<core.CreateChannelInput, Static<typeof CreateChannelBody>>,
  updateChannel: true satisfies Agree<core.ChannelPatch, Static<typeof UpdateChannelBody>>,
  channelTypeView: true satisfies Agree<core.ChannelTypeView, Static<typeof ChannelTypeView>>,
  priceView: true satisfies Agree<core.PriceView, Static<typeof PriceView>>,
  setPrice: true satisfies Agree<core.SetPriceInput, Static<typeof SetPriceBody>>,
  updatePrice: true satisfies Agree<core.PricePatch, Static<typeof UpdatePriceBody>>,
  groupRatioView: true satisfies Agree<core.GroupRatioView, Static<typeof GroupRatioView>>,
  setGroupRatio: true satisfies Agree<core.GroupRatioInput, Static<typeof SetGroupRatioBody>>,
  generateBatch: true satisfies Agree<codes.GenerateBatchInput, Static<typeof GenerateBatchBody>>,
  redemptionBatchView: true satisfies Agree<codes.RedemptionBatchView, Static<typeof RedemptionBatchView>>,
  redemptionCodeView: true satisfies Agree<codes.RedemptionCodeView, Static<typeof RedemptionCodeView>>,
  redemptionView: true satisfies Agree<RedemptionResult, Static<typeof RedemptionView>>,
  ledgerEntry: true satisfies Agree<core.LedgerEntryView, Static<typeof LedgerEntryView>>,
  userWritable: true satisfies Agree<Writable<typeof core.USER_WRITABLE>, WritableOf<typeof UserView>>,
  tokenWritable: true satisfies Agree<Writable<typeof core.TOKEN_WRITABLE>, WritableOf<typeof TokenView>>,
  channelWritable: true satisfies Agree<Writable<typeof core.CHANNEL_WRITABLE>, WritableOf<typeof ChannelView>>,
  priceWritable: true satisfies Agree<Writable<typeof core.PRICE_WRITABLE>, WritableOf<typeof PriceView>>,
};
void agreement;
