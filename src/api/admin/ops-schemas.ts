import { Type } from "@sinclair/typebox";
import { MAX_SERIES_BUCKETS } from "../../store/usage-series.js";
import { AdminTaskView } from "./record-views.js";

/** Queries and answers of the operator views: overview, request log, a task's detail, channel test. */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const UnixSeconds = Type.Integer({ minimum: 0, description: "Unix seconds" });
const IdText = Type.String({ pattern: "^[0-9]{1,15}$" });
const Limit = Type.String({ pattern: "^[0-9]{1,4}$" });

export const OverviewQuery = Type.Object(
  {
    minutes: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,6}$", description: "the last N minutes (default 60); ignored with from" }),
    ),
    from: Type.Optional(Type.String({ pattern: "^[0-9]{1,12}$", description: "Unix seconds, start of the range" })),
    to: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,12}$", description: "Unix seconds, end of the range (default now)" }),
    ),
    bucket_seconds: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,8}$",
        description: `bucket width (default 60); at most ${MAX_SERIES_BUCKETS} buckets in the range`,
      }),
    ),
    by: Type.Optional(Type.Union([Type.Literal("surface"), Type.Literal("model"), Type.Literal("channel")])),
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

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,12}$",
        description: "Unix seconds: the first day counted is the UTC day holding it (default: 29 days before `to`)",
      }),
    ),
    to: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,12}$",
        description: "Unix seconds: the last day counted is the UTC day holding it (default now)",
      }),
    ),
    by: Type.Optional(
      Type.Union(
        ["day", "user", "model", "channel", "surface"].map((b) => Type.Literal(b)),
        {
          description: "one row per day (default), user, model, channel or surface",
        },
      ),
    ),
    user_id: Type.Optional(IdText),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    channel_id: Type.Optional(IdText),
    surface: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional({ ...Limit, description: "most rows (default 100, at most 1000)" }),
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

export const UserListQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "part of the name or email, any case" })),
    limit: Type.Optional(Limit),
    after: Type.Optional(IdText),
  },
  { additionalProperties: false },
);

export const RequestLogQuery = Type.Object(
  {
    user_id: Type.Optional(IdText),
    channel_id: Type.Optional(IdText),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$", description: "HTTP status answered" })),
    after: Type.Optional({ ...IdText, description: "the id of the last row of the previous page" }),
    limit: Type.Optional(Limit),
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

export const TaskIdParams = Type.Object({ task_id: Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" }) });

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
