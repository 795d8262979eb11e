import type { FastifyBaseLogger } from "fastify";
import type { BlobStore } from "../blobs/blob-store.js";
import { unixNow } from "../core/ids.js";
import { removeVideoFiles } from "../core/videos/delete-video.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { VideoRows } from "../store/videos.js";

/** Most videos one round clears. */
const ROUND_LIMIT = 200;

/**
 * Removes the stored files of videos whose retention is over (completed more than
 * `retentionSeconds` ago) and of deleted videos whose files are still stored (a delete that
 * stopped halfway). The video objects stay, with their `expires_at`; their content answers 404.
 */
export class VideoSweeper extends PeriodicService {
  readonly name = "video-sweeper";

  constructor(
    private readonly rows: Pick<VideoRows, "filesDue" | "markFilesRemoved">,
    private readonly files: BlobStore,
    private readonly settings: { retentionSeconds: number; sweepIntervalMs: number },
    private readonly log: Pick<FastifyBaseLogger, "info" | "warn">,
    private readonly now: () => number = unixNow,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.settings.sweepIntervalMs;
  }

  /** One sweep; answers how many videos had their files removed. */
  async round(): Promise<number> {
    let removed = 0;
    try {
      const due = await this.rows.filesDue(this.now() - Math.ceil(this.settings.retentionSeconds), ROUND_LIMIT);
      for (const row of due) {
        await removeVideoFiles(
          { deleteBlob: (key) => this.files.delete(key), markFilesRemoved: (id) => this.rows.markFilesRemoved(id) },
          row,
        );
        removed++;
      }
      if (removed > 0) this.log.info({ removed }, "removed the stored files of expired or deleted videos");
    } catch (err) {
      this.log.warn({ err }, "the video sweep failed; it runs again next round");
    }
    return removed;
  }
}
