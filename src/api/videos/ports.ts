import type { FastifyReply, FastifyRequest } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import type { TaskSubmitDeps } from "../../core/tasks/ports.js";
import type { BodyBounds } from "../../http/input-bounds.js";
import type { IdempotencyKeys } from "../../idempotency/idempotency-keys.js";
import type { VideoRows } from "../../store/videos.js";
import type { ReferenceLimits } from "./reference.js";

/** What the videos surface uses, built by the wiring (src/wiring/video-ports.ts). */
export interface VideoSurfaceDeps {
  submit: TaskSubmitDeps;
  videos: VideoRows;
  /** The stored videos, thumbnails and spritesheets. */
  files: BlobStore;
  idempotency: IdempotencyKeys;
  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  bodies: BodyBounds;
  /** How long completed content is kept (seconds): a video's `expires_at`. */
  retentionSeconds: number;
  reference: ReferenceLimits;
  /** Closes what the surface holds open (the reference fetcher's connections). */
  close(): Promise<void>;
  log: { warn(obj: object, msg: string): void };
}
