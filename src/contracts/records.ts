import { Type } from "@sinclair/typebox";
import { Nullable, UnixSeconds } from "./common.js";

/**
 * Read-only records the admin API lists (ledger rows, tasks with their routing, webhook
 * deliveries, the request log) and the operator views built of them (overview, usage, a task's
 * detail, a channel's test).
 */

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

const Totals = {
  requests: Type.Integer({ minimum: 0 }),
  errors: Type.Integer({ minimum: 0 }),
  spend: Type.Integer({ description: "quota units" }),
};

export const OverviewView = Type.Object(
  {
    from: UnixSeconds,
    to: UnixSeconds,
    bucket_seconds: Type.Integer({ minimum: 1 }),
    by: Type.String(),
    buckets: Type.Array(
      Type.Object(
        {
          start: UnixSeconds,
          ...Totals,
          series: Type.Record(Type.String(), Type.Object(Totals, { additionalProperties: false }), {
            description: "per surface (tasks: their platform), model or channel id",
          }),
        },
        { additionalProperties: false },
      ),
    ),
    tasks_by_state: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
    open_charges: Type.Object(
      { count: Type.Integer({ minimum: 0 }), quota: Type.Integer({ description: "quota the open charges hold" }) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const UsageView = Type.Object(
  {
    from: { ...UnixSeconds, description: "start of the first day counted" },
    to: { ...UnixSeconds, description: "end of the last day counted (exclusive)" },
    by: Type.String(),
    rows: Type.Array(
      Type.Object(
        {
          key: Type.Union([Type.Integer(), Type.String(), Type.Null()], {
            description: "the day (unix seconds), user id, model, channel id or surface; null: no user or no channel",
          }),
          ...Totals,
          prompt_tokens: Type.Integer({ minimum: 0 }),
          completion_tokens: Type.Integer({ minimum: 0, description: "output tokens; images delivered for images" }),
          cached_tokens: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
      { description: "days in order; otherwise the largest spends first" },
    ),
  },
  { additionalProperties: false },
);

export const RequestLogView = Type.Object(
  {
    id: Type.Integer(),
    created_at: UnixSeconds,
    request_id: Type.String(),
    user_id: Nullable(Type.Integer()),
    token_id: Nullable(Type.Integer()),
    channel_id: Nullable(Type.Integer()),
    surface: Type.String(),
    model: Type.String(),
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer({ description: "output tokens; images delivered for images" }),
    cached_tokens: Type.Integer(),
    quota: Type.Integer({ description: "quota billed" }),
    latency_ms: Type.Integer(),
    status: Type.Integer({ description: "HTTP status answered" }),
    error: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const TaskDetailView = Type.Object(
  {
    ...AdminTaskView.properties,
    group: Type.String(),
    result_url: Nullable(Type.String()),
    start_time: UnixSeconds,
    properties: Type.Unknown({ description: "the task's properties (JSON)" }),
    data: Type.Unknown({ description: "the task's data (JSON): clips once it succeeded" }),
    request_body: Type.Unknown({ description: "the body the upstream was sent (JSON)" }),
    callback_url: Nullable(Type.String()),
    poll_errors: Type.Integer({ description: "failed polls in a row" }),
    lease_owner: Nullable(Type.String()),
    created_at: UnixSeconds,
    updated_at: UnixSeconds,
    history: Type.Array(
      Type.Object(
        {
          at: UnixSeconds,
          event: Type.Union(["created", "status", "channel", "poll_failed"].map((e) => Type.Literal(e))),
          detail: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: "oldest first; at most 100 events a task" },
    ),
  },
  { additionalProperties: false },
);

export const ChannelTestView = Type.Object(
  {
    ok: Type.Boolean(),
    latency_ms: Type.Integer({ minimum: 0 }),
    error: Nullable(Type.String({ description: "what went wrong; never the channel's key" })),
  },
  { additionalProperties: false },
);
