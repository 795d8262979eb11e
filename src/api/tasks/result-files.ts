import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { TASK_FILES_PATH } from "../../blobs/result-copier.js";
import { GatewayError } from "../../core/errors.js";
import { parseByteRange } from "../byte-range.js";

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
 * capability, so a URL works wherever it is handed (players, browsers, webhook receivers).
 */
export async function taskFileRoutes(scope: FastifyInstance, opts: { files: BlobStore }) {
  const schema = {
    summary: "A stored task result file",
    response: {
      200: { description: "The whole file, cacheable for good", content: MEDIA },
      206: { description: "The part of the file the Range header asked for", content: MEDIA },
    },
  };
  scope.get<{ Params: { key: string } }>(`/${TASK_FILES_PATH}/:key`, { schema }, async (request, reply) => {
    const { key } = request.params;
    const info = await opts.files.stat(key);
    if (!info) throw new GatewayError("GW_ERR_NOT_FOUND", "No such file.");
    const range = parseByteRange(request.headers.range, info.size);
    reply.header("accept-ranges", "bytes");
    if (range === "unsatisfiable") return reply.status(416).header("content-range", `bytes */${info.size}`).send();
    reply
      .header("content-type", info.mimeType)
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("x-content-type-options", "nosniff");
    const blob = await opts.files.open(key, range ?? undefined);
    if (!blob) throw new GatewayError("GW_ERR_NOT_FOUND", "No such file.");
    if (range === null) return reply.header("content-length", String(blob.size)).send(blob.stream);
    return reply
      .status(206)
      .header("content-range", `bytes ${range.start}-${range.end}/${blob.size}`)
      .header("content-length", String(range.end - range.start + 1))
      .send(blob.stream);
  });
}
