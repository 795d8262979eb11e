import { Type } from "@sinclair/typebox";
import { VIDEO_VARIANTS } from "../../core/videos/video-object.js";

const Nullable = <T extends ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

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

export const VideoDeletedSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal("video.deleted"),
    deleted: Type.Boolean(),
    charge: Type.Object(
      {
        state: Type.Union(
          ["open", "settled", "refunded"].map((s) => Type.Literal(s)),
          {
            description:
              "open: the upstream job runs on and the charge stays held until it ends (settled if the video " +
              "completes, refunded if it fails); settled: the video had completed; refunded: it had failed",
          },
        ),
        quota: Type.Integer({ description: "The video's charge (quota)" }),
        message: Type.String(),
      },
      { description: "The gateway's own field: what the delete did to the video's charge" },
    ),
  },
  { description: "The video is deleted" },
);

export const VideoIdParams = Type.Object({ video_id: Type.String({ minLength: 1, maxLength: 200 }) });

export const VideoListQuery = Type.Object({
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100; default 20" })),
  order: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")], { default: "desc" })),
});

export const VideoContentQuery = Type.Object({
  variant: Type.Optional(Type.Union(VIDEO_VARIANTS.map((v) => Type.Literal(v)))),
});

export {
  VideoCreateSchema as VideoCreateBody,
  VideoRemixSchema as VideoRemixBody,
} from "../../core/tasks/kinds/video-body.js";
