import type { VideoSurfaceDeps } from "../api/videos/ports.js";
import type { BlobStore } from "../blobs/blob-store.js";
import type { Config } from "../config/load.js";
import type { TaskSubmitDeps } from "../core/tasks/ports.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";
import type { Store } from "../store/database.js";
import { VideoRows } from "../store/videos.js";
import { type TaskSubmitParts, taskSubmitPorts } from "./task-ports.js";

export interface VideoSurfaceParts extends TaskSubmitParts {
  config: TaskSubmitParts["config"] & Pick<Config, "videos" | "images">;
  videoFiles: BlobStore;
  store: Store;
}

/** The videos surface's ports over the task engine's submit, the store and the video files. */
export function videoSurfacePorts(
  parts: VideoSurfaceParts,
  store: TaskSubmitDeps["store"],
  authenticate: VideoSurfaceDeps["authenticate"],
): VideoSurfaceDeps {
  const { config } = parts;
  const fetcher = new GuardedFetcher({ allowPrivate: config.images.allowPrivateUrls });
  return {
    submit: taskSubmitPorts(parts, store),
    videos: new VideoRows(parts.store.db),
    files: parts.videoFiles,
    idempotency: parts.idempotency,
    authenticate,
    bodies: config.bodies.images,
    retentionSeconds: config.videos.retentionSeconds,
    reference: { maxBytes: config.videos.referenceMaxBytes, timeoutMs: config.images.fetchTimeoutMs, fetcher },
    close: () => fetcher.close(),
    log: parts.logger,
  };
}
