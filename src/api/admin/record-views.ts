import { Type } from "@sinclair/typebox";

/** Read-only records the admin API lists: ledger rows, tasks with their routing, webhook deliveries. */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const UnixSeconds = Type.Integer({ minimum: 0, description: "Unix seconds" });

export const LedgerEntryView = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    token_id: Nullable(Type.Integer()),
    kind: Type.Union(["charge", "refund", "settle", "topup", "adjust"].map((k) => Type.Literal(k))),
    amount: Type.Integer({ description: "signed quota" }),
    reference: Type.String(),
    note: Type.String(),
    created_at: UnixSeconds,
  },
  { additionalProperties: false },
);

export const AdminTaskView = Type.Object(
  {
    id: Type.Integer(),
    task_id: Type.String(),
    platform: Type.String(),
    user_id: Type.Integer(),
    token_id: Nullable(Type.Integer()),
    channel_id: Type.Integer(),
    upstream_id: Nullable(Type.String()),
    upstream_status: Nullable(Type.String()),
    action: Type.String(),
    status: Type.String(),
    quota: Type.Integer(),
    fail_reason: Type.String(),
    progress: Type.String(),
    submit_time: UnixSeconds,
    finish_time: UnixSeconds,
    poll_count: Type.Integer(),
    next_poll_at: Type.Integer({ description: "Unix milliseconds" }),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryView = Type.Object(
  {
    id: Type.Integer(),
    webhook_id: Type.String(),
    user_id: Type.Integer(),
    task_id: Type.String(),
    url: Type.String(),
    event: Type.String(),
    status: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
    attempts: Type.Integer(),
    next_attempt_at: Type.Integer({ description: "Unix milliseconds" }),
    last_status: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    created_at: UnixSeconds,
    delivered_at: Nullable(UnixSeconds),
  },
  { additionalProperties: false },
);

export const TopUpView = Type.Object(
  {
    applied: Type.Boolean({ description: "false when this reference was applied before" }),
    reference: Type.String(),
    quota: Type.Integer({ description: "the balance after it" }),
  },
  { additionalProperties: false },
);
