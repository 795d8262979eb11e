import type { BlobStore } from "../blobs/blob-store.js";
import { taskFileUrl } from "../blobs/result-copier.js";
import type { Config } from "../config/load.js";
import type { FileIntakePort } from "../core/tasks/ports.js";
import { uploadIntake } from "../net/fetch-upload.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";

/**
 * UPLOAD's intake over the gateway's parts: the guarded fetcher with the upload settings, and the
 * task files' blob store, whose copies each family serves under `/{family}/files/<key>`.
 */
export function uploadIntakePort(
  config: Pick<Config, "uploads">,
  files: BlobStore,
  publicBaseUrl: () => string,
): FileIntakePort {
  return uploadIntake({
    fetcher: new GuardedFetcher({ allowPrivate: config.uploads.allowPrivateUrls }),
    maxBytes: config.uploads.maxBytes,
    timeoutMs: config.uploads.fetchTimeoutMs,
    async store(bytes, contentType, family) {
      const key = await files.put(bytes, contentType);
      return {
        url: taskFileUrl(publicBaseUrl(), family, key),
        // A copy nobody will be sent: removed, and a removal that fails is only an orphan file.
        discard: () =>
          files.delete(key).then(
            () => undefined,
            () => undefined,
          ),
      };
    },
  });
}
