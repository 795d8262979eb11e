import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { VideoIdParams, VideoListQuery, VideoListSchema } from "../../contracts/videos.js";
import { GatewayError } from "../../core/errors.js";
import { videoListPage } from "../../core/videos/list-page.js";
import { sendVideoContent, VIDEO_CONTENT_ANSWERS, VideoContentQuery } from "../../http/video-content.js";
import type { Store } from "../../store/database.js";
import { VideoRows } from "../../store/videos.js";
import { type ConsoleRouteDeps, requireUser } from "./route-deps.js";

/** What the console's video pages use beside the rest of the console's deps. */
export interface ConsoleVideoDeps {
  store: Pick<Store, "db">;
  videoFiles: BlobStore;
  config: ConsoleRouteDeps["config"] & { videos: { retentionSeconds: number } };
}

/**
 * The signed-in user's videos: the same list and stored content as `/v1/videos`, authorised by
 * the console session instead of a token, so the pages can play them (a `<video>` element sends
 * the cookie, never a bearer key).
 */
export async function consoleMeVideoRoutes(base: FastifyInstance, opts: { deps: ConsoleRouteDeps & ConsoleVideoDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const videos = new VideoRows(deps.store.db);
  const retentionSeconds = deps.config.videos.retentionSeconds;

  app.get(
    "/me/videos",
    {
      schema: {
        summary: "The user's videos, newest first (the video objects of /v1/videos)",
        querystring: VideoListQuery,
        response: { 200: VideoListSchema },
      },
    },
    async (request) => {
      const session = await requireUser(deps, request);
      return videoListPage(videos, session.subjectId, request.query, retentionSeconds);
    },
  );

  app.get(
    "/me/videos/:video_id/content",
    {
      schema: {
        summary: "A stored file of one of the user's videos (video, thumbnail or spritesheet), with Range",
        params: VideoIdParams,
        querystring: VideoContentQuery,
        response: VIDEO_CONTENT_ANSWERS,
      },
    },
    async (request, reply) => {
      const session = await requireUser(deps, request);
      const row = await videos.get(session.subjectId, request.params.video_id);
      if (!row) {
        throw new GatewayError("GW_ERR_NOT_FOUND", `No video ${request.params.video_id} was found.`, {
          param: "video_id",
        });
      }
      // The console's answers are never cached; the file is the caller's own.
      return sendVideoContent(
        { files: deps.videoFiles, retentionSeconds },
        row,
        request.query.variant ?? "video",
        request,
        reply,
      );
    },
  );
}
