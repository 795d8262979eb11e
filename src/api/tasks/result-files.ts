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
    const whole = await opts.files.open(key);
    if (!whole) throw new GatewayError("GW_ERR_NOT_FOUND", "No such file.");
    const range = parseByteRange(request.headers.range, whole.size);
    reply
      .header("content-type", whole.mimeType)
      .header("accept-ranges", "bytes")
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("x-content-type-options", "nosniff");
    if (range === "unsatisfiable") {
      (whole.stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
      return reply.status(416).header("content-range", `bytes */${whole.size}`).send();
    }
    if (range === null) return reply.header("content-length", String(whole.size)).send(whole.stream);
    (whole.stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
    const part = await opts.files.open(key, range);
    if (!part) throw new GatewayError("GW_ERR_NOT_FOUND", "No such file.");
    return reply
      .status(206)
      .header("content-range", `bytes ${range.start}-${range.end}/${whole.size}`)
      .header("content-length", String(range.end - range.start + 1))
      .send(part.stream);
  });
}
