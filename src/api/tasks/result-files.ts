import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { TASK_FILES_PATH } from "../../blobs/result-copier.js";
import { sendBlob } from "../../http/blob-downloads.js";

const binary = { schema: { type: "string", format: "binary" } };
const MEDIA = {
  "audio/mpeg": binary,
  "audio/wav": binary,
  "video/mp4": binary,
  "image/png": binary,
  "image/jpeg": binary,
};

/**
 * GET /{family}/files/<key>: a task's stored result file (audio, video, cover image), with the
 * type it was stored as and `Range` support. No credentials: the 40-character random key is the
 * capability, so a URL works wherever it is handed (players, browsers, webhook receivers). With
 * BLOB_DOWNLOADS=redirect, a 302 to a short-lived URL of the bucket instead.
 */
export async function taskFileRoutes(scope: FastifyInstance, opts: { files: BlobStore }) {
  const schema = {
    summary: "A stored task result file",
    response: {
      200: { description: "The whole file, cacheable for good", content: MEDIA },
      206: { description: "The part of the file the Range header asked for", content: MEDIA },
      302: { description: "BLOB_DOWNLOADS=redirect: the file is at the short-lived URL in Location" },
    },
  };
  scope.get<{ Params: { key: string } }>(`/${TASK_FILES_PATH}/:key`, { schema }, (request, reply) =>
    sendBlob(opts.files, request.params.key, request, reply, "No such file."),
  );
}
