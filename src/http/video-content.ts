import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { BlobStore } from "../blobs/blob-store.js";
import { GatewayError } from "../core/errors.js";
import { VIDEO_VARIANTS, type VideoVariant, videoExpiresAt, videoFileKeys } from "../core/videos/video-object.js";
import type { TaskRow } from "../store/task-reads.js";
import { redirectTo, sendBytes } from "./blob-downloads.js";
import { parseByteRange } from "./byte-range.js";

const binary = { schema: { type: "string", format: "binary" } };
const MEDIA = { "video/mp4": binary, "image/jpeg": binary, "image/png": binary, "image/webp": binary };

/** The documented success answers of a route serving a video's stored file. */
export const VIDEO_CONTENT_ANSWERS = {
  200: { description: "The whole file", content: MEDIA },
  206: { description: "The part the Range header asked for", content: MEDIA },
};

/** Which stored file of a video a content route serves (the video itself by default). */
export const VideoContentQuery = Type.Object({
  variant: Type.Optional(Type.Union(VIDEO_VARIANTS.map((v) => Type.Literal(v)))),
});

/** Where a video's files are kept and how long completed content is kept (seconds). */
export interface VideoContentDeps {
  files: BlobStore;
  retentionSeconds: number;
}

/**
 * Answers one stored file of a video the caller owns: a 400 before completion, a 404 once its
 * retention ended or its files are gone, a redirect to the bucket in redirect mode, else the bytes
 * (Range on the MP4). Shared by the Videos API and the console's player.
 */
export async function sendVideoContent(
  deps: VideoContentDeps,
  row: TaskRow,
  variant: VideoVariant,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (row.status !== "SUCCESS") {
    throw new GatewayError("GW_ERR_VALIDATION", `Video ${row.task_id} is not completed; it has no content yet.`, {
      param: "video_id",
    });
  }
  const expired = videoExpiresAt(row.finish_time, deps.retentionSeconds) <= Math.floor(Date.now() / 1000);
  const key = videoFileKeys(row.data)[variant];
  const info = !expired && Number(row.files_removed_at) === 0 && key ? await deps.files.stat(key) : null;
  if (!info || !key) {
    throw new GatewayError("GW_ERR_NOT_FOUND", `The content of video ${row.task_id} has expired.`, {
      param: "video_id",
    });
  }
  // A bucket with BLOB_DOWNLOADS=redirect: a short-lived presigned URL (clients drop the
  // Authorization header on the redirect to another origin).
  const redirect = await deps.files.downloadUrl(key);
  if (redirect !== null) return redirectTo(reply, redirect);
  const range = variant === "video" ? parseByteRange(request.headers.range, info.size) : null;
  reply.header("accept-ranges", variant === "video" ? "bytes" : "none");
  if (range === "unsatisfiable") return reply.status(416).header("content-range", `bytes */${info.size}`).send();
  reply.header("content-type", info.mimeType).header("x-content-type-options", "nosniff");
  const blob = await deps.files.open(key, range ?? undefined);
  if (!blob) throw new GatewayError("GW_ERR_NOT_FOUND", `The content of video ${row.task_id} has expired.`);
  return sendBytes(reply, blob, range);
}
