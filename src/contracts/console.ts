import { Type } from "@sinclair/typebox";
import { Nullable, UnixSeconds } from "./common.js";

/** The shortest password the console accepts. */
export const MIN_PASSWORD_LENGTH = 10;
/** Longest accepted: bounds the work one sign-in can ask for. */
export const MAX_PASSWORD_LENGTH = 1024;

/** Request and answer schemas of the console's own API (they document it in the OpenAPI document). */

/** Checked by the route (length at least 10), so the message can say so in words. */
export const Password = Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: "at least 10 characters" });
/** The pages' rule for a new password: its length checked before it is sent. */
export const NewPassword = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH });
export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: "^[^@\\s]+@[^@\\s]+$" });
const AccountName = Type.String({ minLength: 1, maxLength: 100 });

export const SessionAnswerSchema = Type.Object(
  {
    role: Type.Union([Type.Literal("operator"), Type.Literal("user")]),
    id: Type.Integer(),
    name: Type.String(),
    email: Nullable(Type.String()),
    csrfToken: Type.String({ description: "send it as `x-csrf-token` with every state change" }),
  },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  {
    login: Type.String({ minLength: 1, maxLength: 254, description: "operator name, or user name or email" }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  },
  { additionalProperties: false },
);

export const SignupBody = Type.Object(
  { name: AccountName, email: Email, password: Password },
  { additionalProperties: false },
);

export const InviteParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const InviteAnswer = Type.Object(
  { name: Type.String(), email: Nullable(Type.String()) },
  { additionalProperties: false },
);
export const AcceptInviteBody = Type.Object({ password: Password }, { additionalProperties: false });

export const SignupSettings = Type.Object({ selfSignup: Type.Boolean() }, { additionalProperties: false });

export const MeAnswer = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    email: Nullable(Type.String()),
    quota: Type.Integer({ description: "balance in quota units" }),
    used_quota: Type.Integer(),
    credit_line: Type.Integer(),
    status: Type.String(),
    webhook_url: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const PageQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", description: "the last id of the previous page" })),
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
  },
  { additionalProperties: false },
);

export const TaskQuery = Type.Object(
  {
    ...PageQuery.properties,
    platform: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  },
  { additionalProperties: false },
);

export const SpendQuery = Type.Object(
  {
    days: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$", description: "1 to 366; 30 by default" })),
    by: Type.Optional(Type.Literal("model")),
  },
  { additionalProperties: false },
);

export const SpendAnswer = Type.Object(
  {
    buckets: Type.Array(
      Type.Object(
        {
          start: UnixSeconds,
          spend: Type.Integer({ description: "quota units" }),
          series: Type.Record(Type.String(), Type.Integer()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ImageItem = Type.Object(
  { id: Type.Integer(), created_at: UnixSeconds, model: Type.String(), url: Type.String() },
  { additionalProperties: false },
);

export const NewTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    quota_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    expires_at: Type.Optional(Nullable(UnixSeconds)),
    models: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 }))),
  },
  { additionalProperties: false },
);

export const TokenIdParams = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,15}$" }) });
export const TaskIdParams = Type.Object({ task_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const WebhookAnswer = Type.Object(
  { url: Nullable(Type.String()), secret: Nullable(Type.String()) },
  { additionalProperties: false },
);
export const SetWebhookBody = Type.Object(
  { url: Nullable(Type.String({ minLength: 1, maxLength: 2000 })) },
  { additionalProperties: false },
);
export const SecretAnswer = Type.Object({ secret: Type.String() }, { additionalProperties: false });
export const PlaygroundAnswer = Type.Object(
  { key: Type.String({ description: "a token of this user, valid for one hour" }), expires_at: UnixSeconds },
  { additionalProperties: false },
);

export const ConsoleSettingsView = Type.Object({ self_signup: Type.Boolean() }, { additionalProperties: false });
export const InviteCreated = Type.Object(
  { invite_url: Type.String(), expires_at: UnixSeconds },
  { additionalProperties: false },
);
