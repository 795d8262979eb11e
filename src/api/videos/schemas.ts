import { Type } from "@sinclair/typebox";

/**
 * The Videos API's own schemas: the delete answer and the create and remix bodies (the video object,
 * its list and queries: contracts/videos.ts; the content query: http/video-content.ts).
 */

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

export {
  VideoCreateSchema as VideoCreateBody,
  VideoRemixSchema as VideoRemixBody,
} from "../../core/tasks/kinds/video-body.js";
