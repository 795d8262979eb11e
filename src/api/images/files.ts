import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { GatewayError } from "../../core/errors.js";

/** Path under the images surface where stored images are served. */
export const FILES_PATH = "/images/files";

/**
 * GET /v1/images/files/<key>: a stored image. No credentials: the 40-character random key is the
 * capability, so a URL works wherever it is handed (browsers, other services).
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
    },
  };
  app.get<{ Params: { key: string } }>(`${FILES_PATH}/:key`, { schema }, async (request, reply) => {
    const blob = await opts.blobs.open(request.params.key);
    if (!blob) throw new GatewayError("GW_ERR_NOT_FOUND", "No such image.");
    return reply
      .header("content-type", blob.mimeType)
      .header("content-length", String(blob.size))
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("x-content-type-options", "nosniff")
      .send(blob.stream);
  });
}
