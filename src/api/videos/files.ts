import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { TASK_FILES_PATH } from "../../blobs/result-copier.js";
import { sendBlob } from "../../http/blob-downloads.js";
import { installSurface } from "../../http/surfaces.js";
import { VIDEO_CONTENT_ANSWERS } from "../../http/video-content.js";

/**
 * GET /video/files/<key>: a stored file of a completed video (the MP4, its thumbnail or its
 * spritesheet), the URL its task record and the console name. Like the audio families' files, no
 * credentials: the 40-character random key is the capability, so the URL plays wherever it is
 * handed. Unlike theirs, a video's files go when the video is deleted or its retention ends (the
 * sweeper's next round), after which the key answers 404; so the answer is never cached. `Range`
 * is honoured; with BLOB_DOWNLOADS=redirect, a 302 to a short-lived URL of the bucket instead.
 * Errors come in the envelope shape, as every task platform's files (`/{platform}/files`) do.
 */
export async function videoFileRoutes(scope: FastifyInstance, opts: { files: BlobStore }) {
  installSurface(scope, "envelope");
  const schema = {
    summary: "A stored file of a completed video (video, thumbnail or spritesheet)",
    response: {
      ...VIDEO_CONTENT_ANSWERS,
      302: { description: "BLOB_DOWNLOADS=redirect: the file is at the short-lived URL in Location" },
    },
  };
  scope.get<{ Params: { key: string } }>(`/${TASK_FILES_PATH}/:key`, { schema }, (request, reply) =>
    sendBlob(opts.files, request.params.key, request, reply, "No such file.", "no-store"),
  );
}
