import { Type } from "@sinclair/typebox";
import { MAX_SERIES_BUCKETS } from "../../core/usage-series.js";

/** Queries of the operator views (overview, usage, users, request log, a task's detail): HTTP's own. */

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

export const TaskIdParams = Type.Object({ task_id: Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" }) });
