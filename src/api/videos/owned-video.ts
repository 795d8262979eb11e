import type { FastifyRequest } from "fastify";
import { GatewayError } from "../../core/errors.js";
import type { TaskRow } from "../../store/task-reads.js";
import { principalOf } from "../auth-hook.js";
import type { VideoSurfaceDeps } from "./ports.js";

/** The caller's video, or a 404 naming `video_id` (another user's id reads as unknown). */
export async function ownedVideo(deps: VideoSurfaceDeps, request: FastifyRequest): Promise<TaskRow> {
  const { video_id: id } = request.params as { video_id: string };
  const row = await deps.videos.get(principalOf(request).userId, id);
  if (!row) throw new GatewayError("GW_ERR_NOT_FOUND", `No video found with id '${id}'.`, { param: "video_id" });
  return row;
}
