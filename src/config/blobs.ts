import path from "node:path";
import { ConfigError } from "./error.js";

/** Where the blob stores keep their files, read from `BLOB_URL`. */
export type BlobLocation = { kind: "file"; folder: string } | { kind: "s3"; bucket: string; prefix: string };

/** S3 bucket names: 3 to 63 lowercase letters, digits, dots and hyphens, a letter or digit at each end. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Object-name segments of characters every S3-compatible server takes as they are. */
const PREFIX = /^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/;

function invalid(url: string, why: string): ConfigError {
  return new ConfigError(`invalid setting "blobs.url" (BLOB_URL): ${why} (got "${url}")`);
}

/**
 * Reads `BLOB_URL`: `file://<folder>` (absolute, or relative to the working directory, as in
 * `file://./blobs`) or `s3://<bucket>/<optional prefix>`. Null means `file://<dataDir>/blobs`.
 * Throws a ConfigError naming the setting.
 */
export function blobLocation(url: string | null, dataDir: string): BlobLocation {
  if (url === null) return { kind: "file", folder: path.resolve(dataDir, "blobs") };
  if (url.startsWith("file://")) {
    const folder = url.slice("file://".length);
    if (!folder) throw invalid(url, "name a folder, as in file:///var/lib/media-gateway/blobs or file://./blobs");
    return { kind: "file", folder: path.resolve(folder) };
  }
  const s3 = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(url);
  if (!s3) throw invalid(url, "must be file://<folder> or s3://<bucket>/<optional prefix>");
  const bucket = s3[1] ?? "";
  if (!BUCKET.test(bucket)) {
    throw invalid(url, "the bucket name must be 3 to 63 lowercase letters, digits, dots or hyphens");
  }
  const prefix = (s3[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix !== "" && !PREFIX.test(prefix)) {
    throw invalid(url, "the prefix may hold letters, digits and !_.*'()- between single slashes");
  }
  return { kind: "s3", bucket, prefix };
}
