import { Type } from "@sinclair/typebox";
import { Nullable } from "./common.js";

/**
 * The video object of the OpenAI Videos API, a page of them and the queries that ask for them:
 * the Videos API answers them, and the console lists a user's own videos in the same shape.
 */

/** The video object of the OpenAI Videos API. */
export const VideoObjectSchema = Type.Object(
  {
    id: Type.String({ description: "The gateway's id of the video (video_...)" }),
    object: Type.Literal("video"),
    model: Type.String(),
    status: Type.Union(["queued", "in_progress", "completed", "failed"].map((s) => Type.Literal(s))),
    progress: Type.Integer({ minimum: 0, maximum: 100 }),
    created_at: Type.Integer(),
    completed_at: Nullable(Type.Integer()),
    expires_at: Nullable(Type.Integer({ description: "When the gateway removes the stored content" })),
    prompt: Type.Union([Type.String(), Type.Null()]),
    seconds: Type.String(),
    size: Type.String(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    remixed_from_video_id: Type.Union([Type.String(), Type.Null()]),
  },
  { description: "The video object" },
);

export const VideoListSchema = Type.Object(
  {
    object: Type.Literal("list"),
    data: Type.Array(VideoObjectSchema),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  },
  { description: "One page of your videos" },
);

export const VideoIdParams = Type.Object({ video_id: Type.String({ minLength: 1, maxLength: 200 }) });

export const VideoListQuery = Type.Object({
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100; default 20" })),
  order: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")], { default: "desc" })),
});
