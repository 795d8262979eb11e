import { type Static, Type } from "@sinclair/typebox";

const PerMinute = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }), Type.Null()]);

/**
 * An operator's rate limit of metered calls (content, chat, images). `subject`: the token's or
 * user's id, or the model's name; "" (with a group) for a group's default of its tokens or users.
 * `group`: "" for the subject's own limit; for a model, the group the limit is for ("" = every
 * group without its own). A model's limit is counted per user. null: no limit of that kind.
 */
export const RateLimitView = Type.Object(
  {
    scope: Type.Union([Type.Literal("token"), Type.Literal("user"), Type.Literal("model")]),
    subject: Type.String({ maxLength: 200 }),
    group: Type.String({ maxLength: 64 }),
    requestsPerMinute: PerMinute,
    tokensPerMinute: PerMinute,
  },
  { additionalProperties: false },
);
export type RateLimitView = Static<typeof RateLimitView>;

/** The body of a limit to set: its identity (subject and group default to "") and its limits. */
export const SetRateLimitBody = Type.Object(
  {
    scope: RateLimitView.properties.scope,
    subject: Type.Optional(RateLimitView.properties.subject),
    group: Type.Optional(RateLimitView.properties.group),
    requestsPerMinute: Type.Optional(PerMinute),
    tokensPerMinute: Type.Optional(PerMinute),
  },
  { additionalProperties: false },
);
export type SetRateLimitBody = Static<typeof SetRateLimitBody>;

/** Which limit to remove. */
export const RateLimitKey = Type.Object(
  {
    scope: RateLimitView.properties.scope,
    subject: Type.Optional(RateLimitView.properties.subject),
    group: Type.Optional(RateLimitView.properties.group),
  },
  { additionalProperties: false },
);
export type RateLimitKey = Static<typeof RateLimitKey>;
