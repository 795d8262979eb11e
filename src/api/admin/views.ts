import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import type { Channel } from "../../core/channel.js";
import { ChannelSettingsApiSchema, settingsToApi } from "../../core/channel-settings.js";
import type { PriceRow } from "../../store/prices.js";
import type { TokenRow } from "../../store/tokens.js";
import type { UserRow } from "../../store/users.js";
import { vendors } from "../../upstreams/registry.js";

/**
 * What the admin API answers, as schemas and as the functions that build them. Every field is
 * snake_case. A field marked read-only may be sent back in a PATCH and is ignored there, so a
 * GET body can be changed and sent back as it is; a write-only field (a channel's key) is taken
 * and never shown.
 */

/** Marks a field as shown but not changed by a PATCH (it is accepted there and ignored). */
export const ReadOnly = <T extends TSchema>(schema: T): T => ({ ...schema, readOnly: true });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = ReadOnly(Type.Integer({ minimum: 1 }));
const UnixSeconds = Type.Integer({ minimum: 0, description: "Unix seconds" });
const Stamp = ReadOnly(UnixSeconds);
const Quota = Type.Integer({ description: "quota units" });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Group = Type.String({ minLength: 1, maxLength: 64 });
const ModelNames = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 });
const IpList = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200 });
const HttpUrl = Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2000 });

/** The schema of a view, open to every field in a PATCH: writable fields checked, read-only ones ignored. */
// biome-ignore lint/complexity/noBannedTypes: no extra fields by default
export function patchBodyOf<T extends TProperties, E extends TProperties = {}>(view: TObject<T>, extra?: E) {
  return Type.Partial(Type.Object({ ...view.properties, ...(extra ?? ({} as E)) }), {
    additionalProperties: false,
    minProperties: 1,
  });
}

/** The writable fields of a PATCH body: read-only ones (per the view's schema) dropped. */
export function writableFields<T extends Record<string, unknown>>(view: TObject, body: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const field = view.properties[k] as { readOnly?: boolean } | undefined;
    if (v !== undefined && field && !field.readOnly) out[k] = v;
  }
  return out as Partial<T>;
}

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

/** A user as the admin API shows it (the webhook secret never leaves the store). */
export function userView(u: UserRow): UserView {
  return {
    id: Number(u.id),
    name: u.name,
    group: u.group,
    status: u.status as UserView["status"],
    webhook_url: u.webhook_url,
    email: u.email ?? null,
    quota: Number(u.quota),
    used_quota: Number(u.used_quota),
    credit_line: Number(u.credit_line),
    created_at: Number(u.created_at),
    updated_at: Number(u.updated_at),
  };
}

/** The answer to a user's creation: the user and its webhook signing secret, shown this once. */
export const CreatedUserView = Type.Object(
  { ...UserView.properties, webhook_secret: Nullable(Type.String({ description: "shown once" })) },
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

/** A token as the admin API lists it: no key, no hash. */
export function tokenView(t: TokenRow): TokenView {
  return {
    id: Number(t.id),
    user_id: Number(t.user_id),
    name: t.name,
    key_prefix: t.key_prefix,
    status: t.status as TokenView["status"],
    expires_at: t.expires_at === null ? null : Number(t.expires_at),
    quota_limit: t.quota_limit === null ? null : Number(t.quota_limit),
    used_quota: Number(t.used_quota),
    models: t.models ? (JSON.parse(t.models) as string[]) : null,
    ip_allow: t.ip_allow ? (JSON.parse(t.ip_allow) as string[]) : null,
    created_at: Number(t.created_at),
    updated_at: Number(t.updated_at),
  };
}

/** The answer to a token's creation: the token and its key, shown this once. */
export const CreatedTokenView = Type.Object(
  { ...TokenView.properties, key: Type.String({ description: "the token's key (`sk-...`), shown once" }) },
  { additionalProperties: false },
);

// ---- channels ----

/** A channel's fields that an operator sets (besides its write-only key). */
export const channelWritable = {
  name: Name,
  type: Type.Union(
    vendors.types.map((t) => Type.Literal(t)),
    { description: "the upstream's protocol: GET /channel-types lists each with what it serves and its settings" },
  ),
  base_url: HttpUrl,
  models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 500 }),
  model_mapping: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 })),
  groups: Type.Array(Group, { minItems: 1, maxItems: 100 }),
  priority: Type.Integer({ minimum: -1000, maximum: 1000 }),
  weight: Type.Integer({ minimum: 0, maximum: 10_000 }),
  price_ratio: Type.Number({ minimum: 0, maximum: 1000 }),
  status: Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("auto_disabled")], {
    description: "`auto_disabled` is set by the gateway after repeated failures",
  }),
  settings: ChannelSettingsApiSchema,
};

/** The upstream key: taken on creation and change, never shown. */
export const ChannelKey = Type.String({ minLength: 1, maxLength: 4000, writeOnly: true });

export const ChannelView = Type.Object(
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
export type ChannelView = Static<typeof ChannelView>;

/** A channel as an API may show it: everything but the key. */
export function channelView(c: Channel): ChannelView {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    base_url: c.baseUrl,
    models: c.models,
    model_mapping: c.modelMapping,
    groups: c.groups,
    priority: c.priority,
    weight: c.weight,
    price_ratio: c.priceRatio,
    status: c.status as ChannelView["status"],
    settings: settingsToApi(c.settings),
    status_reason: c.statusReason,
    failure_count: c.failureCount,
    last_error: c.lastError,
    last_error_at: c.lastErrorAt,
    last_success_at: c.lastSuccessAt,
    success_count: c.successCount,
    request_count: c.requestCount,
    recent_success_rate: c.recentSuccessRate,
    // Filled from the request log where a view is answered over HTTP (channel list and show).
    latency_ms_p50: null,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

// ---- prices and group ratios ----

const PriceKind = Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]);
const Amount = Type.Number({ minimum: 0, maximum: 1_000_000 });

export const PriceView = Type.Object(
  {
    kind: ReadOnly(PriceKind),
    name: ReadOnly(Type.String({ minLength: 1, maxLength: 200 })),
    price: { ...Amount, description: "per call or per image, currency units" },
    input_per_million: { ...Amount, description: "content: per million input tokens" },
    output_per_million: { ...Amount, description: "content: per million output tokens" },
    cached_ratio: Type.Number({ minimum: 0, maximum: 1, description: "content: share charged for cached input" }),
    updated_at: Stamp,
  },
  { additionalProperties: false },
);
export type PriceView = Static<typeof PriceView>;

export function priceView(r: PriceRow): PriceView {
  return {
    kind: r.kind as PriceView["kind"],
    name: r.name,
    price: Number(r.price),
    input_per_million: Number(r.input_per_million),
    output_per_million: Number(r.output_per_million),
    cached_ratio: Number(r.cached_ratio),
    updated_at: Number(r.updated_at),
  };
}

export const GroupRatioView = Type.Object(
  { group: ReadOnly(Group), ratio: Type.Number({ minimum: 0, maximum: 1000 }) },
  { additionalProperties: false },
);

// ---- the envelope ----

/** The success envelope around `data`. */
export function Envelope<T extends TSchema>(data: T, description = "Done: `data` holds the result") {
  return Type.Object(
    { code: Type.Literal("success"), message: Type.String(), data },
    { additionalProperties: false, description },
  );
}

export function ok<T>(data: T) {
  return { code: "success" as const, message: "", data };
}
