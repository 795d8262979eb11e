import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Nullable, OneOf, patchBodyOf, ReadOnly, UnixSeconds } from "./common.js";

/**
 * What the admin API answers and takes about users, tokens, channels, prices and group ratios.
 * Every field is snake_case. A field marked read-only may be sent back in a PATCH and is ignored
 * there, so a GET body can be changed and sent back as it is; a write-only field (a channel's
 * key) is taken and never shown.
 */

const Id = ReadOnly(Type.Integer({ minimum: 1 }));
const Stamp = ReadOnly(UnixSeconds);
const Quota = Type.Integer({ description: "quota units" });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Group = Type.String({ minLength: 1, maxLength: 64 });
const ModelNames = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 });
const IpList = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200 });
const HttpUrl = Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2000 });

// ---- users ----

/** A user's fields that an operator sets; add a user setting here and in `userView`. */
export const userWritable = {
  name: Name,
  group: Group,
  status: Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("deleted")], {
    description: "`deleted` is set by DELETE only",
  }),
  webhook_url: Nullable(Type.String({ minLength: 1, maxLength: 2000, description: "where task events go" })),
  credit_line: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: "how far below zero the balance may go, in quota; 0 = not at all",
  }),
};

export const UserView = Type.Object(
  {
    id: Id,
    ...userWritable,
    email: ReadOnly(
      Nullable(Type.String({ description: "the console sign-in email, lower-case; set by the user's sign-up" })),
    ),
    quota: ReadOnly({ ...Quota, description: "balance; changed by top-ups and spending" }),
    used_quota: ReadOnly(Quota),
    created_at: Stamp,
    updated_at: Stamp,
  },
  { additionalProperties: false },
);
export type UserView = Static<typeof UserView>;

/** The answer to a user's creation: the user and its webhook signing secret, shown this once. */
export const CreatedUserView = Type.Object(
  { ...UserView.properties, webhook_secret: Nullable(Type.String({ description: "shown once" })) },
  { additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    name: userWritable.name,
    group: Type.Optional(userWritable.group),
    /** Initial quota, recorded as a top-up. */
    quota: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    credit_line: Type.Optional(userWritable.credit_line),
  },
  { additionalProperties: false },
);

/** Any field of a user as GET shows it: writable ones change, read-only ones are ignored. */
export const UpdateUserBody = patchBodyOf(UserView);

export const TopUpBody = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    /** Makes a retried top-up apply once. Generated when absent. */
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const SetWebhookBody = Type.Object(
  { url: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()]) },
  { additionalProperties: false },
);

// ---- tokens ----

export const TokenView = Type.Object(
  {
    id: Id,
    user_id: ReadOnly(Type.Integer({ minimum: 1 })),
    name: Name,
    key_prefix: ReadOnly(Type.String({ description: "the first characters of the key, to recognise it" })),
    status: Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("revoked")], {
      description: "`revoked` is set by DELETE only",
    }),
    expires_at: Nullable(UnixSeconds),
    quota_limit: Nullable(Type.Integer({ minimum: 0, description: "most the token may spend in all" })),
    used_quota: ReadOnly(Quota),
    models: Nullable(ModelNames),
    ip_allow: Nullable(IpList),
    created_at: Stamp,
    updated_at: Stamp,
  },
  { additionalProperties: false },
);
export type TokenView = Static<typeof TokenView>;

/** The answer to a token's creation: the token and its key, shown this once. */
export const CreatedTokenView = Type.Object(
  { ...TokenView.properties, key: Type.String({ description: "the token's key (`sk-...`), shown once" }) },
  { additionalProperties: false },
);

export const CreateTokenBody = Type.Object(
  {
    name: Name,
    expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    quota_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    models: Type.Optional(Type.Union([ModelNames, Type.Null()])),
    ip_allow: Type.Optional(Type.Union([IpList, Type.Null()])),
  },
  { additionalProperties: false },
);

/** Any field of a token as GET shows it; `null` removes a limit. */
export const UpdateTokenBody = patchBodyOf(TokenView);

// ---- channels ----

/** The upstream key: taken on creation and change, never shown. */
export const ChannelKey = Type.String({ minLength: 1, maxLength: 4000, writeOnly: true });

/** Most keys one request adds to a pool. */
export const MAX_KEYS_AT_ONCE = 10_000;

const KeyRotation = Type.Union([Type.Literal("round_robin"), Type.Literal("random")], {
  description: "how calls spread over the live keys of the channel's pool",
});
const Tag = Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,64}$" });
const Tags = Type.Array(Tag, { maxItems: 50, description: "words to act on several channels at once" });

/** A key of a channel's pool: masked, with its state and counters. */
export const ChannelKeyView = Type.Object(
  {
    id: Id,
    channel_id: ReadOnly(Type.Integer({ minimum: 1 })),
    key: ReadOnly(Type.String({ description: "the key's last four characters behind a mask" })),
    state: ReadOnly(
      Type.Union([Type.Literal("live"), Type.Literal("dead"), Type.Literal("disabled")], {
        description: "`dead`: the upstream refused it or its account is out of quota; probed again on a schedule",
      }),
    ),
    enabled: Type.Boolean({ description: "false: never used nor probed" }),
    dead_reason: ReadOnly(Nullable(Type.String())),
    dead_at: ReadOnly(Nullable(UnixSeconds)),
    next_probe_at: ReadOnly(Nullable(UnixSeconds)),
    calls: ReadOnly(Type.Integer({ minimum: 0 })),
    failures: ReadOnly(Type.Integer({ minimum: 0 })),
    last_error: ReadOnly(Nullable(Type.String())),
    last_error_at: ReadOnly(Nullable(UnixSeconds)),
    created_at: Stamp,
  },
  { additionalProperties: false },
);
export type ChannelKeyView = Static<typeof ChannelKeyView>;

export const AddChannelKeysBody = Type.Object(
  {
    keys: Type.Optional(Type.Array(ChannelKey, { maxItems: MAX_KEYS_AT_ONCE })),
    text: Type.Optional(
      Type.String({
        maxLength: 4_000_000,
        writeOnly: true,
        description: "keys, one a line; `#` starts a comment line",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const AddedChannelKeysView = Type.Object(
  {
    added: Type.Array(ChannelKeyView),
    duplicates: Type.Integer({ minimum: 0, description: "keys sent that the pool already held" }),
  },
  { additionalProperties: false },
);

export const UpdateChannelKeyBody = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

export const ChannelKeyParams = Type.Object({
  id: Type.String({ pattern: "^[0-9]{1,15}$" }),
  keyId: Type.String({ pattern: "^[0-9]{1,15}$" }),
});

export const ChannelTagView = Type.Object(
  { tag: Tag, channels: Type.Integer({ minimum: 0, description: "channels carrying the tag" }) },
  { additionalProperties: false },
);

export const ChannelTagParams = Type.Object({ tag: Tag });

/** A change to every channel carrying a tag: each field sent is set on each channel. */
export const UpdateChannelTagBody = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal("enabled"), Type.Literal("disabled")])),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    price_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
    models: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 500 })),
    groups: Type.Optional(Type.Array(Group, { minItems: 1, maxItems: 100 })),
    key_rotation: Type.Optional(KeyRotation),
  },
  { additionalProperties: false, minProperties: 1 },
);

/**
 * The channel contracts for the given channel types and settings schema. The gateway builds them
 * from its vendor registry (so a type it does not know is refused by the schema); the pages use
 * the exports below, where the type is any text and the settings any object.
 */
export function channelContracts<S extends TSchema>(types: readonly string[], settings: S) {
  /** A channel's fields that an operator sets (besides its write-only key). */
  const channelWritable = {
    name: Name,
    type: OneOf(types, {
      description: "the upstream's protocol: GET /channel-types lists each with what it serves and its settings",
    }),
    base_url: HttpUrl,
    models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 500 }),
    model_mapping: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 })),
    groups: Type.Array(Group, { minItems: 1, maxItems: 100 }),
    priority: Type.Integer({ minimum: -1000, maximum: 1000 }),
    weight: Type.Integer({ minimum: 0, maximum: 10_000 }),
    price_ratio: Type.Number({ minimum: 0, maximum: 1000 }),
    status: Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("auto_disabled")], {
      description: "`auto_disabled` is set by the gateway after repeated failures, or when no key of its pool is live",
    }),
    settings,
    key_rotation: KeyRotation,
    tags: Tags,
  };
  const ChannelView = Type.Object(
    {
      id: Id,
      ...channelWritable,
      status_reason: ReadOnly(Type.String()),
      failure_count: ReadOnly(Type.Integer({ minimum: 0, description: "consecutive failures" })),
      last_error: ReadOnly(Nullable(Type.String())),
      last_error_at: ReadOnly(Nullable(UnixSeconds)),
      last_success_at: ReadOnly(Nullable(UnixSeconds)),
      success_count: ReadOnly(Type.Integer({ minimum: 0 })),
      request_count: ReadOnly(Type.Integer({ minimum: 0 })),
      recent_success_rate: ReadOnly(Type.Number({ minimum: 0, maximum: 1 })),
      latency_ms_p50: ReadOnly(
        Nullable(Type.Integer({ minimum: 0, description: "median latency of the channel's last 100 logged requests" })),
      ),
      created_at: Stamp,
      updated_at: Stamp,
    },
    { additionalProperties: false },
  );
  const CreateChannelBody = Type.Object(
    {
      name: channelWritable.name,
      type: channelWritable.type,
      base_url: channelWritable.base_url,
      key: ChannelKey,
      models: channelWritable.models,
      model_mapping: Type.Optional(channelWritable.model_mapping),
      groups: Type.Optional(channelWritable.groups),
      priority: Type.Optional(channelWritable.priority),
      weight: Type.Optional(channelWritable.weight),
      price_ratio: Type.Optional(channelWritable.price_ratio),
      status: Type.Optional(Type.Union([Type.Literal("enabled"), Type.Literal("disabled")])),
      settings: Type.Optional(channelWritable.settings),
      key_rotation: Type.Optional(KeyRotation),
      tags: Type.Optional(Tags),
      keys: Type.Optional(
        Type.Array(ChannelKey, { maxItems: MAX_KEYS_AT_ONCE, description: "more keys for the pool, after `key`" }),
      ),
    },
    { additionalProperties: false },
  );
  const UpdateChannelBody = patchBodyOf(ChannelView, { key: ChannelKey });
  return { channelWritable, ChannelView, CreateChannelBody, UpdateChannelBody };
}

/** The channel contracts as the pages see them: any type, any settings object. */
export const { ChannelView, CreateChannelBody, UpdateChannelBody } = channelContracts(
  [],
  Type.Record(Type.String(), Type.Unknown()),
);
export type ChannelView = Static<typeof ChannelView>;

// ---- prices and group ratios ----

const PriceKind = Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]);
const Amount = Type.Number({ minimum: 0, maximum: 1_000_000 });

/** What a price counts (docs/price-model.md). */
export const PRICE_UNITS = ["call", "image", "second", "character", "search_unit", "tokens"] as const;
const PriceUnit = Type.Union(PRICE_UNITS.map((u) => Type.Literal(u)));

/** A token price's rates beside input and output: null (or absent) falls back, as `TOKEN_RATE_FALLBACK` says. */
export const TOKEN_RATE_FIELDS = [
  "cache_read_per_million",
  "cache_write_5m_per_million",
  "cache_write_1h_per_million",
  "audio_input_per_million",
  "reasoning_per_million",
  "audio_output_per_million",
] as const;
export type TokenRateField = (typeof TOKEN_RATE_FIELDS)[number];

/** The rate an empty token rate is billed at. */
export const TOKEN_RATE_FALLBACK: Record<TokenRateField, string> = {
  cache_read_per_million: "input_per_million",
  cache_write_5m_per_million: "input_per_million",
  cache_write_1h_per_million: "cache_write_5m_per_million",
  audio_input_per_million: "input_per_million",
  reasoning_per_million: "output_per_million",
  audio_output_per_million: "output_per_million",
};

const Rate = (description: string) => Type.Union([{ ...Amount, description }, Type.Null()]);
const TokenRates = {
  cache_read_per_million: Rate("tokens: per million cache-read tokens (null: input's rate)"),
  cache_write_5m_per_million: Rate("tokens: per million tokens written to a 5-minute cache (null: input's rate)"),
  cache_write_1h_per_million: Rate("tokens: per million tokens written to a 1-hour cache (null: the 5-minute rate)"),
  audio_input_per_million: Rate("tokens: per million audio input tokens (null: input's rate)"),
  reasoning_per_million: Rate("tokens: per million reasoning tokens (null: output's rate)"),
  audio_output_per_million: Rate("tokens: per million audio output tokens (null: output's rate)"),
};

export const PriceView = Type.Object(
  {
    kind: ReadOnly(PriceKind),
    name: ReadOnly(Type.String({ minLength: 1, maxLength: 200 })),
    unit: { ...PriceUnit, description: "what is counted: call, image, second, character, search_unit or tokens" },
    price: {
      ...Amount,
      description: "per call, image or second; per million characters; per thousand search units (currency units)",
    },
    input_per_million: { ...Amount, description: "tokens: per million input tokens" },
    output_per_million: { ...Amount, description: "tokens: per million output tokens" },
    ...TokenRates,
    cached_ratio: Type.Number({
      minimum: 0,
      maximum: 1,
      description: "tokens: cache-read rate as a share of input (older form of cache_read_per_million)",
    }),
    updated_at: Stamp,
  },
  { additionalProperties: false },
);
export type PriceView = Static<typeof PriceView>;

export const SetPriceBody = Type.Object(
  {
    kind: Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    unit: Type.Optional(PriceUnit),
    price: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    input_per_million: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    output_per_million: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    cache_read_per_million: Type.Optional(TokenRates.cache_read_per_million),
    cache_write_5m_per_million: Type.Optional(TokenRates.cache_write_5m_per_million),
    cache_write_1h_per_million: Type.Optional(TokenRates.cache_write_1h_per_million),
    audio_input_per_million: Type.Optional(TokenRates.audio_input_per_million),
    reasoning_per_million: Type.Optional(TokenRates.reasoning_per_million),
    audio_output_per_million: Type.Optional(TokenRates.audio_output_per_million),
    cached_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

/** Any field of a price as GET shows it; fields not sent keep their value. */
export const UpdatePriceBody = patchBodyOf(PriceView);

export const PriceParams = Type.Object(
  {
    kind: Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);

export const GroupRatioView = Type.Object(
  { group: ReadOnly(Group), ratio: Type.Number({ minimum: 0, maximum: 1000 }) },
  { additionalProperties: false },
);

export const GroupParams = Type.Object({ group: Type.String({ minLength: 1, maxLength: 64 }) });
/** The ratio; `group` (as GET shows it) may be sent too and must be the path's. */
export const SetGroupRatioBody = Type.Object(
  { group: Type.Optional(GroupRatioView.properties.group), ratio: GroupRatioView.properties.ratio },
  { additionalProperties: false },
);

// ---- records ----

const IdText = Type.String({ pattern: "^[0-9]{1,15}$" });
/** What every record list is filtered and paged by. */
const RecordListFields = {
  limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
  after: Type.Optional(IdText),
  user_id: Type.Optional(IdText),
  task_id: Type.Optional(Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" })),
};

export const TaskListQuery = Type.Object(
  {
    ...RecordListFields,
    status: Type.Optional(Type.String({ pattern: "^[A-Z_]{1,32}$" })),
    platform: Type.Optional(Type.String({ pattern: "^[a-z0-9]{1,32}$" })),
  },
  { additionalProperties: false },
);

export const WebhookListQuery = Type.Object(
  {
    ...RecordListFields,
    status: Type.Optional(Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")])),
  },
  { additionalProperties: false },
);
