import { GatewayError } from "../errors.js";
import type { StoredTask } from "../tasks/ports.js";
import { renderVideo, type VideoObject } from "./video-object.js";

/** The owner's videos in creation order, as the store lists them. */
export interface VideoListPort {
  /** A page after the video `after` when given; null when `after` is not one of the owner's listed videos. */
  list(
    userId: number,
    page: { after?: string; limit: number; order: "asc" | "desc" },
  ): Promise<{ rows: StoredTask[]; hasMore: boolean } | null>;
}

export interface VideoListPage {
  object: "list";
  data: VideoObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/**
 * One page of a user's videos as the Videos API lists them: `limit` 1 to 100 (20 by default),
 * `after` one of the user's own videos (a 400 naming it otherwise), newest first by default.
 * Used by `/v1/videos` and by the console's list.
 */
export async function videoListPage(
  videos: VideoListPort,
  userId: number,
  query: { after?: string; limit?: string; order?: "asc" | "desc" },
  retentionSeconds: number,
): Promise<VideoListPage> {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (limit < 1 || limit > 100) {
    throw new GatewayError("GW_ERR_VALIDATION", "limit must be from 1 to 100", { param: "limit" });
  }
  const page = await videos.list(userId, { after: query.after, limit, order: query.order ?? "desc" });
  if (!page) {
    throw new GatewayError("GW_ERR_VALIDATION", `after ${query.after} is not one of your videos`, { param: "after" });
  }
  const data = page.rows.map((r) => renderVideo(r, retentionSeconds));
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: page.hasMore,
  };
}
