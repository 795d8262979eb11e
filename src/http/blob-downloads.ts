import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { BlobStore, ByteRange, StoredBlob } from "../blobs/blob-store.js";
import { GatewayError } from "../core/errors.js";
import { parseByteRange } from "./byte-range.js";

/** How long an answer carrying a blob may be kept by caches. */
export type BlobCaching = "immutable" | "no-store";

const CACHE_CONTROL: Record<BlobCaching, string> = {
  immutable: "public, max-age=31536000, immutable",
  // Files the gateway removes before their key could change (a deleted or expired video).
  "no-store": "private, no-store",
};

/**
 * Answers a GET or HEAD of a stored blob under its unguessable key. When the store hands out
 * download URLs (an S3 bucket with BLOB_DOWNLOADS=redirect), a 302 to a short-lived presigned
 * URL; otherwise the bytes, whole (200) or the part a `Range` header asks for (206, or 416 past
 * the end), with their type, cacheable for good unless `caching` says otherwise. An unknown key
 * is a 404 with `notFound`.
 */
export async function sendBlob(
  store: BlobStore,
  key: string,
  request: FastifyRequest,
  reply: FastifyReply,
  notFound: string,
  caching: BlobCaching = "immutable",
): Promise<FastifyReply> {
  const header = request.headers.range;
  const redirect = await store.downloadUrl(key);
  // A plain GET from a proxying store reads the object once; anything else asks its size first.
  if (!header && redirect === null && request.method === "GET") {
    const blob = await store.open(key);
    if (!blob) throw new GatewayError("GW_ERR_NOT_FOUND", notFound);
    return stored(reply, blob.mimeType, caching).header("content-length", String(blob.size)).send(blob.stream);
  }
  const info = await store.stat(key);
  if (!info) throw new GatewayError("GW_ERR_NOT_FOUND", notFound);
  if (redirect !== null) return redirectTo(reply, redirect);
  const range = parseByteRange(header, info.size);
  if (range === "unsatisfiable") {
    return reply.status(416).header("accept-ranges", "bytes").header("content-range", `bytes */${info.size}`).send();
  }
  stored(reply, info.mimeType, caching);
  if (request.method === "HEAD") {
    // The headers alone: an empty body keeps the lengths set here, and nothing is read from the store.
    const length = range ? range.end - range.start + 1 : info.size;
    if (range) reply.status(206).header("content-range", `bytes ${range.start}-${range.end}/${info.size}`);
    return reply.header("content-length", String(length)).send(Readable.from([]));
  }
  const blob = await store.open(key, range ?? undefined);
  if (!blob) throw new GatewayError("GW_ERR_NOT_FOUND", notFound);
  return sendBytes(reply, blob, range);
}

/** A redirect to a store's presigned download URL, which expires: the answer may not be cached. */
export function redirectTo(reply: FastifyReply, url: string): FastifyReply {
  return reply.status(302).header("location", url).header("cache-control", "no-store").send();
}

/** The bytes of a blob opened for `range`: the whole blob (its headers set before), or the part (206). */
export function sendBytes(reply: FastifyReply, blob: StoredBlob, range: ByteRange | null): FastifyReply {
  if (range === null) return reply.header("content-length", String(blob.size)).send(blob.stream);
  return reply
    .status(206)
    .header("content-range", `bytes ${range.start}-${range.end}/${blob.size}`)
    .header("content-length", String(range.end - range.start + 1))
    .send(blob.stream);
}

/** The headers of every answer carrying a blob's bytes. */
function stored(reply: FastifyReply, mimeType: string, caching: BlobCaching): FastifyReply {
  return reply
    .header("accept-ranges", "bytes")
    .header("content-type", mimeType)
    .header("cache-control", CACHE_CONTROL[caching])
    .header("x-content-type-options", "nosniff");
}
