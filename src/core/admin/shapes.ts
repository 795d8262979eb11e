import type { ChannelSettingsApi } from "../channel-settings.js";

export type PriceKind = "task" | "image" | "content";

/**
 * What the operator's use cases take and answer, in the admin API's snake_case. The TypeBox
 * contracts (src/contracts/) are what HTTP, the command line and the pages validate with; the
 * wiring checks at compile time that these types and those contracts agree, field for field.
 */

export interface UserView {
  id: number;
  name: string;
  group: string;
  status: "enabled" | "disabled" | "deleted";
  webhook_url: string | null;
  credit_line: number;
  email: string | null;
  quota: number;
  used_quota: number;
  created_at: number;
  updated_at: number;
}
export type CreatedUserView = UserView & { webhook_secret: string | null };

export interface TokenView {
  id: number;
  user_id: number;
  name: string;
  key_prefix: string;
  status: "enabled" | "disabled" | "revoked";
  expires_at: number | null;
  quota_limit: number | null;
  used_quota: number;
  models: string[] | null;
  ip_allow: string[] | null;
  created_at: number;
  updated_at: number;
}
export type CreatedTokenView = TokenView & { key: string };

export interface ChannelView {
  id: number;
  name: string;
  type: string;
  base_url: string;
  models: string[];
  model_mapping: Record<string, string>;
  groups: string[];
  priority: number;
  weight: number;
  price_ratio: number;
  status: "enabled" | "disabled" | "auto_disabled";
  settings: ChannelSettingsApi;
  key_rotation: "round_robin" | "random";
  tags: string[];
  status_reason: string;
  failure_count: number;
  last_error: string | null;
  last_error_at: number | null;
  last_success_at: number | null;
  success_count: number;
  request_count: number;
  recent_success_rate: number;
  latency_ms_p50: number | null;
  created_at: number;
  updated_at: number;
}

export interface ChannelTypeView {
  type: string;
  description: string;
  capabilities: string[];
  task_platforms: string[];
  settings: { name: string; description: string; schema: Record<string, unknown> }[];
}

export type PriceUnit = "call" | "image" | "second" | "character" | "search_unit" | "tokens";
/** A token price's rates beside input and output; null falls back (docs/price-model.md). */
export type TokenRateField =
  | "cache_read_per_million"
  | "cache_write_5m_per_million"
  | "cache_write_1h_per_million"
  | "audio_input_per_million"
  | "reasoning_per_million"
  | "audio_output_per_million";

/** A price: what it counts (`unit`), per unit (`price`) or per million tokens of each bucket, in currency units. */
export type PriceView = { kind: PriceKind; name: string; unit: PriceUnit } & Record<
  "price" | "input_per_million" | "output_per_million" | "cached_ratio" | "updated_at",
  number
> &
  Record<TokenRateField, number | null>;

export interface GroupRatioView {
  group: string;
  ratio: number;
}

/**
 * A ledger row: its `kind` is charge, refund, settle, topup or adjust, its `amount` signed quota,
 * a top-up's `reference` the operator's own.
 */
export type LedgerEntryView = Record<"id" | "user_id" | "amount" | "created_at", number> &
  Record<"kind" | "reference" | "note", string> & { token_id: number | null };

// ---- what the use cases take ----

export interface CreateUserInput {
  name: string;
  group?: string;
  /** Initial quota, recorded as a top-up. */
  quota?: number;
  credit_line?: number;
}
/** Any field of a user as shown: the writable ones change, the others are ignored. */
export type UserPatch = Partial<UserView>;

export interface TopUpInput {
  amount: number;
  /** Makes a retried top-up apply once; made up when absent. */
  reference?: string;
  note?: string;
}

export interface CreateTokenInput {
  name: string;
  expires_at?: number | null;
  quota_limit?: number | null;
  models?: string[] | null;
  ip_allow?: string[] | null;
}
export type TokenPatch = Partial<TokenView>;

export interface CreateChannelInput {
  name: string;
  type: string;
  base_url: string;
  key: string;
  models: string[];
  model_mapping?: Record<string, string>;
  groups?: string[];
  priority?: number;
  weight?: number;
  price_ratio?: number;
  status?: "enabled" | "disabled";
  settings?: ChannelSettingsApi;
  key_rotation?: "round_robin" | "random";
  tags?: string[];
  /** More keys for the pool, after `key`. */
  keys?: string[];
}
/** Any field of a channel as shown, and its write-only key. */
export type ChannelPatch = Partial<ChannelView & { key: string }>;

export type SetPriceInput = {
  kind: PriceKind;
  name: string;
  unit?: PriceUnit;
  price?: number;
  input_per_million?: number;
  output_per_million?: number;
  cached_ratio?: number;
} & Partial<Record<TokenRateField, number | null>>;
export type PricePatch = Partial<PriceView>;

/** The ratio; `group` (as shown) may be sent too and must be the path's. */
export interface GroupRatioInput {
  group?: string;
  ratio: number;
}

/**
 * The fields of each view an operator changes; the others are shown and, sent back in a change,
 * ignored. They are the fields the contracts do not mark read-only (the wiring checks it).
 */
export const USER_WRITABLE = ["name", "group", "status", "webhook_url", "credit_line"] as const;
export const TOKEN_WRITABLE = ["name", "status", "expires_at", "quota_limit", "models", "ip_allow"] as const;
export const CHANNEL_WRITABLE = [
  "name",
  "type",
  "base_url",
  "models",
  "model_mapping",
  "groups",
  "priority",
  "weight",
  "price_ratio",
  "status",
  "settings",
  "key_rotation",
  "tags",
] as const;
export const PRICE_WRITABLE = [
  "unit",
  "price",
  "input_per_million",
  "output_per_million",
  "cache_read_per_million",
  "cache_write_5m_per_million",
  "cache_write_1h_per_million",
  "audio_input_per_million",
  "reasoning_per_million",
  "audio_output_per_million",
  "cached_ratio",
] as const;

/** The writable fields of a change: the others, and those sent as undefined, dropped. */
export function writableFields<T extends object, K extends keyof T>(
  fields: readonly K[],
  body: T,
): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const field of fields) {
    if (body[field] !== undefined) out[field] = body[field];
  }
  return out;
}

/** A key of a channel's pool as operators see it: masked, with its state and counters. */
export interface ChannelKeyView {
  id: number;
  channel_id: number;
  /** The key's last four characters behind a mask, never more. */
  key: string;
  state: "live" | "dead" | "disabled";
  enabled: boolean;
  dead_reason: string | null;
  dead_at: number | null;
  next_probe_at: number | null;
  calls: number;
  failures: number;
  last_error: string | null;
  last_error_at: number | null;
  created_at: number;
}

/** Keys to add to a pool: a list, or a text of one key a line, or both. */
export interface AddChannelKeysInput {
  keys?: string[];
  text?: string;
}

/** What a bulk import of keys did. */
export interface AddedChannelKeysView {
  added: ChannelKeyView[];
  /** Keys sent that the pool already held (or sent twice). */
  duplicates: number;
}

/** A change to every channel with a tag: the fields sent are set on each. */
export interface ChannelTagPatch {
  status?: "enabled" | "disabled";
  priority?: number;
  weight?: number;
  price_ratio?: number;
  models?: string[];
  groups?: string[];
  key_rotation?: "round_robin" | "random";
}

/** A tag and how many channels carry it. */
export interface ChannelTagView {
  tag: string;
  channels: number;
}
