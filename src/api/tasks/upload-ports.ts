import path from "node:path";
import { LocalBlobStore } from "../../blobs/local-blob-store.js";
import type { Config } from "../../config.js";
import type { FileIntakePort } from "../../core/tasks/ports.js";
import { uploadIntake } from "../../net/fetch-upload.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";

/** Where each family serves its stored task files (uploads and copied results): `/{family}/files/<key>`. */
const TASK_FILES_PATH = "files";

/**
 * UPLOAD's intake over the gateway's parts: the guarded fetcher with the upload settings, the
 * task files' blob store, and the public URL of a stored file.
 */
export function uploadIntakePort(
  config: Pick<Config, "uploads" | "dataDir">,
  publicBaseUrl: () => string,
): FileIntakePort {
  const blobs = new LocalBlobStore(path.join(config.dataDir, "blobs", "tasks"));
  return uploadIntake({
    fetcher: new GuardedFetcher({ allowPrivate: config.uploads.allowPrivateUrls }),
    maxBytes: config.uploads.maxBytes,
    timeoutMs: config.uploads.fetchTimeoutMs,
    store: async (bytes, contentType, family) =>
      `${publicBaseUrl()}/${family}/${TASK_FILES_PATH}/${await blobs.put(bytes, contentType)}`,
  });
}
