import { Type } from "@sinclair/typebox";
import {
  ChannelKey,
  ChannelView,
  channelWritable,
  GroupRatioView,
  PriceView,
  patchBodyOf,
  TokenView,
  UserView,
  userWritable,
} from "./views.js";

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

/** Any field of a token as GET shows it; `null` removes a limit. */
export const UpdateTokenBody = patchBodyOf(TokenView);

export const CreateChannelBody = Type.Object(
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
  },
  { additionalProperties: false },
);

/** Any field of a channel as GET shows it, and the write-only key. */
export const UpdateChannelBody = patchBodyOf(ChannelView, { key: ChannelKey });

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

/** Any field of a price as GET shows it; fields not sent keep their value. */
export const UpdatePriceBody = patchBodyOf(PriceView);

export const PriceParams = Type.Object(
  {
    kind: Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);

export const GroupParams = Type.Object({ group: Type.String({ minLength: 1, maxLength: 64 }) });
/** The ratio; `group` (as GET shows it) may be sent too and must be the path's. */
export const SetGroupRatioBody = Type.Object(
  { group: Type.Optional(GroupRatioView.properties.group), ratio: GroupRatioView.properties.ratio },
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
