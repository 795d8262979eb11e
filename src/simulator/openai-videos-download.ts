import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  byteRange,
  simVideoFile,
  trickle,
  VARIANT_TYPES,
  VIDEO_VARIANTS,
  type VideoVariant,
} from "./openai-videos-content.js";
import type { SimVideo } from "./openai-videos-lifecycle.js";
import { openAiError, videoNotFound } from "./openai-videos-request.js";

/** One content download the simulator answered: when it began, and whether (and when) it ended. */
export interface VideoDownload {
  videoId: string;
  variant: VideoVariant;
  /** The `Range` header, when one was sent. */
  range: string | null;
  startedAt: number;
  /** When the last byte was written, or the client went away; null while it runs. */
  endedAt: number | null;
  /** Every byte was written. */
  complete: boolean;
}

/** Most downloads kept in the log (older ones are dropped first). */
const DOWNLOAD_LOG_LIMIT = 10_000;

/**
 * `GET /v1/videos/{id}/content?variant=...` (ranges honoured; a slow video's bytes trickle out) and
 * `GET /simulator/videos/downloads`, the log of content downloads, so that a test run can tell
 * when a copy is under way.
 */
export async function videoContentRoutes(
  app: FastifyInstance,
  opts: {
    live(id: string): SimVideo | null;
    record(request: FastifyRequest, body: unknown): unknown;
    downloads: VideoDownload[];
  },
) {
  const { live, record, downloads } = opts;

  app.get("/simulator/videos/downloads", async () => ({ downloads }));

  app.get<{ Params: { id: string }; Querystring: { variant?: string } }>(
    "/v1/videos/:id/content",
    async (request, reply) => {
      record(request, null);
      const variant = request.query.variant ?? "video";
      if (!VIDEO_VARIANTS.includes(variant as VideoVariant)) {
        const message = `Invalid value: '${variant}'. Supported values are: 'video', 'thumbnail', and 'spritesheet'.`;
        return reply.status(400).send(openAiError(message, "invalid_request_error", "variant", "invalid_value"));
      }
      const video = live(request.params.id);
      if (!video) return reply.status(404).send(videoNotFound(request.params.id));
      if (video.finishedAt === null || video.ends !== "completed") {
        const why = video.finishedAt === null ? "is not ready yet" : "failed and has no content";
        return reply.status(400).send(openAiError(`Video ${video.id} ${why}.`));
      }
      const bytes = simVideoFile(video, variant as VideoVariant);
      const range = byteRange(request.headers.range, bytes.length);
      if (range === "unsatisfiable") {
        return reply
          .status(416)
          .header("content-range", `bytes */${bytes.length}`)
          .send(openAiError("Range Not Satisfiable"));
      }
      const download: VideoDownload = {
        videoId: video.id,
        variant: variant as VideoVariant,
        range: request.headers.range ?? null,
        startedAt: Date.now(),
        endedAt: null,
        complete: false,
      };
      if (downloads.length >= DOWNLOAD_LOG_LIMIT) downloads.shift();
      downloads.push(download);
      reply.raw.once("finish", () => {
        download.complete = true;
        download.endedAt = Date.now();
      });
      reply.raw.once("close", () => {
        download.endedAt ??= Date.now();
      });
      reply.header("content-type", VARIANT_TYPES[variant as VideoVariant]).header("accept-ranges", "bytes");
      const body = range ? bytes.subarray(range.start, range.end + 1) : bytes;
      if (range) reply.status(206).header("content-range", `bytes ${range.start}-${range.end}/${bytes.length}`);
      reply.header("content-length", body.length);
      return reply.send(video.slowContentMs === null ? body : trickle(body, video.slowContentMs));
    },
  );
}
