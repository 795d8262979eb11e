import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { sendVideoContent, VIDEO_CONTENT_ANSWERS } from "../../api/videos/content.js";
import { VideoContentQuery, VideoIdParams, VideoListQuery, VideoListSchema } from "../../api/videos/schemas.js";
import type { BlobStore } from "../../blobs/blob-store.js";
import { GatewayError } from "../../core/errors.js";
import { renderVideo } from "../../core/videos/video-object.js";
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
      const q = request.query;
      const limit = q.limit === undefined ? 20 : Number(q.limit);
      if (limit < 1 || limit > 100) {
        throw new GatewayError("GW_ERR_VALIDATION", "querystring.limit must be from 1 to 100", { param: "limit" });
      }
      const page = await videos.list(session.subjectId, { after: q.after, limit, order: q.order ?? "desc" });
      if (!page) {
        throw new GatewayError("GW_ERR_VALIDATION", `after ${q.after} is not one of your videos`, { param: "after" });
      }
      const data = page.rows.map((r) => renderVideo(r, retentionSeconds));
      return {
        object: "list" as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        has_more: page.hasMore,
      };
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
