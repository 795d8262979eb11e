import { Type } from "@sinclair/typebox";
import { CHANNEL_TYPES } from "../../store/channels.js";

export const IdParams = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,15}$" }) });
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    before: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
  },
  { additionalProperties: false },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
/** How far below zero a user's balance may go (quota); 0 = not at all. */
const CreditLine = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Status = Type.Union([Type.Literal("enabled"), Type.Literal("disabled")]);

export const CreateUserBody = Type.Object(
  {
    name: Name,
    group: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** Initial quota, recorded as a top-up. */
    quota: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    credit_line: Type.Optional(CreditLine),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Name),
    group: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    status: Type.Optional(Status),
    credit_line: Type.Optional(CreditLine),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TopUpBody = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    /** Makes a retried top-up apply once. Generated when absent. */
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const Models = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 });
const IpAllow = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200 });

export const CreateTokenBody = Type.Object(
  {
    name: Name,
    expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    quota_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    models: Type.Optional(Type.Union([Models, Type.Null()])),
    ip_allow: Type.Optional(Type.Union([IpAllow, Type.Null()])),
  },
  { additionalProperties: false },
);

export const UpdateTokenBody = Type.Object(
  {
    name: Type.Optional(Name),
    status: Type.Optional(Status),
    expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    quota_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    models: Type.Optional(Type.Union([Models, Type.Null()])),
    ip_allow: Type.Optional(Type.Union([IpAllow, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

const ChannelSettings = Type.Object(
  {
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 50, maximum: 600_000 })),
    firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 50, maximum: 3_600_000 })),
    batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    prefix: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" })),
  },
  { additionalProperties: false },
);

const channelFields = {
  name: Name,
  type: Type.Union(CHANNEL_TYPES.map((t) => Type.Literal(t))),
  base_url: Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2000 }),
  key: Type.String({ minLength: 1, maxLength: 4000 }),
  models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 500 }),
  model_mapping: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 })),
  groups: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }),
  priority: Type.Integer({ minimum: -1000, maximum: 1000 }),
  weight: Type.Integer({ minimum: 0, maximum: 10_000 }),
  price_ratio: Type.Number({ minimum: 0, maximum: 1000 }),
  status: Status,
  settings: ChannelSettings,
};

export const CreateChannelBody = Type.Object(
  {
    name: channelFields.name,
    type: channelFields.type,
    base_url: channelFields.base_url,
    key: channelFields.key,
    models: channelFields.models,
    model_mapping: Type.Optional(channelFields.model_mapping),
    groups: Type.Optional(channelFields.groups),
    priority: Type.Optional(channelFields.priority),
    weight: Type.Optional(channelFields.weight),
    price_ratio: Type.Optional(channelFields.price_ratio),
    status: Type.Optional(channelFields.status),
    settings: Type.Optional(channelFields.settings),
  },
  { additionalProperties: false },
);

export const UpdateChannelBody = Type.Partial(CreateChannelBody, { additionalProperties: false, minProperties: 1 });

export const SetPriceBody = Type.Object(
  {
    kind: Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    input_per_million: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    output_per_million: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    cached_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

export const GroupParams = Type.Object({ group: Type.String({ minLength: 1, maxLength: 64 }) });
export const SetGroupRatioBody = Type.Object(
  { ratio: Type.Number({ minimum: 0, maximum: 1000 }) },
  { additionalProperties: false },
);

export const TaskListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    user_id: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    status: Type.Optional(Type.String({ pattern: "^[A-Z_]{1,32}$" })),
    platform: Type.Optional(Type.String({ pattern: "^[a-z0-9]{1,32}$" })),
    task_id: Type.Optional(Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" })),
  },
  { additionalProperties: false },
);

export function limitOf(raw: string | undefined, fallback = 50, max = 500): number {
  if (raw === undefined) return fallback;
  return Math.min(Math.max(1, Number(raw)), max);
}

export const SetWebhookBody = Type.Object(
  { url: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()]) },
  { additionalProperties: false },
);

export const WebhookListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    user_id: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    task_id: Type.Optional(Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" })),
    status: Type.Optional(Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")])),
  },
  { additionalProperties: false },
);
