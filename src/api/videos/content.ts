import type { FastifyInstance } from "fastify";
import { VideoIdParams } from "../../contracts/videos.js";
import type { VideoVariant } from "../../core/videos/video-object.js";
import { sendVideoContent, VIDEO_CONTENT_ANSWERS, VideoContentQuery } from "../../http/video-content.js";
import { ownedVideo } from "./owned-video.js";
import type { VideoSurfaceDeps } from "./ports.js";

/**
 * GET /v1/videos/{id}/content?variant=video|thumbnail|spritesheet: the gateway's stored copy,
 * with its type and `Range` support. A video that is not completed is a 400; one whose retention
 * ended (or whose files are gone) a 404 saying so.
 */
export async function videoContentRoute(app: FastifyInstance, opts: { deps: VideoSurfaceDeps }) {
  const { deps } = opts;
  const schema = {
    summary: "Download a video's content (video, thumbnail or spritesheet)",
    params: VideoIdParams,
    querystring: VideoContentQuery,
    response: VIDEO_CONTENT_ANSWERS,
  };
  app.get<{ Params: { video_id: string }; Querystring: { variant?: VideoVariant } }>(
    "/:video_id/content",
    { schema },
    async (request, reply) => {
      const row = await ownedVideo(deps, request);
      return sendVideoContent(deps, row, request.query.variant ?? "video", request, reply);
    },
  );
}
