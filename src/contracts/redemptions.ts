import { Type } from "@sinclair/typebox";
import { Nullable, UnixSeconds } from "./common.js";

/** The most codes one batch may hold. */
export const MAX_BATCH_CODES = 10_000;

/**
 * A batch to generate: how many codes, what each credits (`quota`, or `amount` in currency units,
 * converted with QUOTA_PER_UNIT; exactly one of them), and optionally an expiry, a name prefix
 * and a limit of codes of the batch per user.
 */
export const GenerateBatchBody = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: MAX_BATCH_CODES }),
    quota: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    amount: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "in currency units" }),
    ),
    expires_at: Type.Optional(Nullable(UnixSeconds)),
    prefix: Type.Optional(
      Type.String({ pattern: "^[A-Za-z0-9]{1,16}$", description: "letters and digits, up to 16; kept upper-case" }),
    ),
    per_user_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_BATCH_CODES }))),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const RedemptionBatchView = Type.Object(
  {
    id: Type.Integer(),
    prefix: Type.String(),
    quota: Type.Integer({ description: "credited by each code" }),
    amount: Type.Number({ description: "the same in currency units" }),
    count: Type.Integer(),
    used: Type.Integer({ description: "codes redeemed so far" }),
    per_user_limit: Nullable(Type.Integer()),
    expires_at: Nullable(UnixSeconds),
    status: Type.Union([Type.Literal("enabled"), Type.Literal("disabled")]),
    note: Type.String(),
    exported_at: Nullable(UnixSeconds),
    created_at: UnixSeconds,
  },
  { additionalProperties: false },
);

export const RedemptionCodeView = Type.Object(
  {
    id: Type.Integer(),
    batch_id: Type.Integer(),
    code: Type.String({ description: "its start and end only: the full code is shown by the batch's export alone" }),
    status: Type.Union([Type.Literal("unused"), Type.Literal("used"), Type.Literal("disabled")]),
    user_id: Nullable(Type.Integer()),
    redeemed_at: Nullable(UnixSeconds),
    created_at: UnixSeconds,
  },
  { additionalProperties: false },
);

export const RedemptionCodeQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
    after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    status: Type.Optional(Type.Union([Type.Literal("unused"), Type.Literal("used"), Type.Literal("disabled")])),
  },
  { additionalProperties: false },
);

export const RedeemBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const RedemptionView = Type.Object(
  {
    code: Type.String({ description: "the code's start and end" }),
    batch_id: Type.Integer(),
    quota: Type.Integer({ description: "quota credited" }),
    amount: Type.Number({ description: "the same in currency units" }),
    balance: Type.Integer({ description: "the balance after it" }),
    reference: Type.String({ description: "the ledger row's reference" }),
  },
  { additionalProperties: false },
);
