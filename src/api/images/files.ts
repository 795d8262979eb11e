import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { sendBlob } from "../../http/blob-downloads.js";

/** Path under the images surface where stored images are served. */
export const FILES_PATH = "/images/files";

/**
 * GET /v1/images/files/<key>: a stored image. No credentials: the 40-character random key is the
 * capability, so a URL works wherever it is handed (browsers, other services). `Range` is honoured;
 * with BLOB_DOWNLOADS=redirect the answer is a 302 to a short-lived URL of the bucket.
 */
export async function imageFileRoutes(app: FastifyInstance, opts: { blobs: BlobStore }) {
  const image = { schema: { type: "string", format: "binary" } };
  const schema = {
    summary: "A stored image",
    response: {
      200: {
        description: "The image bytes, cacheable for good",
        content: { "image/png": image, "image/jpeg": image, "image/webp": image },
      },
      206: {
        description: "The part of the image the Range header asked for",
        content: { "image/png": image, "image/jpeg": image, "image/webp": image },
      },
      302: { description: "BLOB_DOWNLOADS=redirect: the image is at the short-lived URL in Location" },
    },
  };
  app.get<{ Params: { key: string } }>(`${FILES_PATH}/:key`, { schema }, (request, reply) =>
    sendBlob(opts.blobs, request.params.key, request, reply, "No such image."),
  );
}
