import path from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { type BlobLocation, blobLocation } from "../config/blobs.js";
import { ConfigError } from "../config/error.js";
import type { Config } from "../config/load.js";
import type { BlobStore } from "./blob-store.js";
import { DeferredBlobStore } from "./deferred-blob-store.js";
import { LocalBlobStore } from "./local-blob-store.js";
import { explainBucketFailure } from "./s3-startup-errors.js";

/** The settings the blob stores are opened from. */
export type BlobSettings = Pick<Config, "dataDir" | "blobs" | "s3">;

/** How long a presigned download URL of `BLOB_DOWNLOADS=redirect` stays valid. */
export const REDIRECT_SECONDS = 300;

/** The S3 parts, loaded by the first gateway of the process that uses a bucket. */
const loadS3 = () => Promise.all([import("./s3-client.js"), import("./s3-blob-store.js")]);

/** One client per configuration: every area of one gateway shares its connections. */
const clients = new WeakMap<BlobSettings["s3"], Promise<S3Client>>();

function clientFor(s3: BlobSettings["s3"]): Promise<S3Client> {
  let client = clients.get(s3);
  if (!client) {
    client = loadS3().then(([{ createS3Client }]) => createS3Client(s3));
    clients.set(s3, client);
  }
  return client;
}

/** Where the stores are; redirects need a bucket to send clients to. */
function locate(config: BlobSettings): BlobLocation {
  const location = blobLocation(config.blobs.url, config.dataDir);
  if (location.kind === "file" && config.blobs.downloads === "redirect") {
    throw new ConfigError(
      'invalid setting "blobs.downloads" (BLOB_DOWNLOADS): redirect needs an s3:// BLOB_URL (a folder has no URL to send clients to); use proxy',
    );
  }
  return location;
}

/**
 * The blob store of one area (`tasks`, `images`, `videos`, ...): the folder `<folder>/<area>` of
 * a `file://` BLOB_URL, or the objects `<prefix>/<area>/<key>` of an `s3://` one. Throws a
 * ConfigError when BLOB_DOWNLOADS=redirect has no bucket to redirect to.
 */
export function openBlobStore(config: BlobSettings, area: string): BlobStore {
  const location = locate(config);
  if (location.kind === "file") return new LocalBlobStore(path.join(location.folder, area));
  const redirectSeconds = config.blobs.downloads === "redirect" ? REDIRECT_SECONDS : undefined;
  return new DeferredBlobStore(async () => {
    const [, { S3BlobStore }] = await loadS3();
    const client = await clientFor(config.s3);
    return new S3BlobStore({ client, bucket: location.bucket, prefix: location.prefix, area, redirectSeconds });
  });
}

/**
 * At start: BLOB_DOWNLOADS=redirect has a bucket (else a ConfigError), and an `s3://` BLOB_URL's
 * bucket answers to these credentials (else a StartupError naming what to fix). A folder needs no
 * check: it is created on the first write.
 */
export async function checkBlobStorage(config: BlobSettings): Promise<void> {
  const location = locate(config);
  if (location.kind !== "s3") return;
  const [{ headBucket }] = await loadS3();
  try {
    await headBucket(await clientFor(config.s3), location.bucket, config.s3.checkTimeoutMs);
  } catch (err) {
    throw explainBucketFailure(err, location.bucket, config.s3.endpoint);
  }
}
