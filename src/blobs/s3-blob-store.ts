import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { randomBase62 } from "../core/ids.js";
import { type BlobInfo, type BlobStore, BlobTooLargeError, type ByteRange, type StoredBlob } from "./blob-store.js";
import { BLOB_KEY, extensionOf, mimeTypeOf } from "./blob-types.js";

/** Where one store's objects live: `<prefix>/<area>/<key>` in `bucket`. */
export interface S3Area {
  client: S3Client;
  bucket: string;
  /** The bucket's prefix from BLOB_URL ("" for none), without slashes at either end. */
  prefix: string;
  /** `tasks`, `images`, ...: one store per area. */
  area: string;
  /** Set: `downloadUrl` hands out presigned URLs valid this long (BLOB_DOWNLOADS=redirect). */
  redirectSeconds?: number;
  /** Bytes of one part of a multipart upload, the most one upload holds in memory (default 5 MiB). */
  partBytes?: number;
}

/** The least part size S3 accepts for all but the last part of a multipart upload. */
const MIN_PART_BYTES = 5 * 1024 * 1024;

/** An object the bucket does not hold (HEAD answers a bare 404; GET names NoSuchKey). */
function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** The whole object's size from a `Content-Range: bytes 10-19/12345` answer. */
function totalOf(contentRange: string | undefined): number | null {
  const total = /\/(\d+)$/.exec(contentRange ?? "")?.[1];
  return total === undefined ? null : Number(total);
}

/**
 * Blobs in an S3-compatible bucket, so that every gateway instance reads what any of them wrote.
 * Keys are those of the local store (40 random base62 characters and the type's extension); the
 * type is also the object's Content-Type. Uploads stream in parts: memory holds one part, never
 * the file.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly base: string;

  constructor(private readonly where: S3Area) {
    this.client = where.client;
    this.bucket = where.bucket;
    this.base = where.prefix ? `${where.prefix}/${where.area}/` : `${where.area}/`;
  }

  async put(bytes: Buffer, mimeType: string): Promise<string> {
    const key = this.newKey(mimeType);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.base + key, Body: bytes, ContentType: mimeType }),
    );
    return key;
  }

  async putStream(
    source: AsyncIterable<Buffer | Uint8Array>,
    mimeType: string,
    limits: { maxBytes: number },
  ): Promise<string> {
    const key = this.newKey(mimeType);
    // Why the body failed, if it did: the upload's own error may be that of cleaning up after it.
    let failure: unknown = null;
    // Counts what passes; past the bound the body fails, and with it the upload, before the
    // last part is sent: the object is never completed.
    async function* bounded() {
      let size = 0;
      try {
        for await (const chunk of source) {
          size += chunk.length;
          if (size > limits.maxBytes) throw new BlobTooLargeError(limits.maxBytes);
          yield chunk;
        }
      } catch (err) {
        failure = err;
        throw err;
      }
    }
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.base + key, Body: Readable.from(bounded()), ContentType: mimeType },
      partSize: Math.max(MIN_PART_BYTES, this.where.partBytes ?? MIN_PART_BYTES),
      queueSize: 1,
      // A failed multipart upload is aborted: its parts are not kept (nor billed).
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      throw failure ?? err;
    }
    return key;
  }

  async open(key: string, range?: ByteRange): Promise<StoredBlob | null> {
    if (!BLOB_KEY.test(key)) return null;
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.base + key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      const size = (range ? totalOf(answer.ContentRange) : null) ?? answer.ContentLength ?? 0;
      return { mimeType: this.typeOf(key, answer.ContentType), size, stream: answer.Body as Readable };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    if (!BLOB_KEY.test(key)) return null;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.base + key }));
      return { mimeType: this.typeOf(key, head.ContentType), size: head.ContentLength ?? 0 };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<boolean> {
    // S3 answers a delete the same whether the object was there or not: ask first.
    if (!(await this.stat(key))) return false;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.base + key }));
    return true;
  }

  async downloadUrl(key: string): Promise<string | null> {
    const expiresIn = this.where.redirectSeconds;
    if (expiresIn === undefined || !BLOB_KEY.test(key)) return null;
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.base + key }), {
      expiresIn,
    });
  }

  private newKey(mimeType: string): string {
    const ext = extensionOf(mimeType);
    if (!ext) throw new Error(`cannot store blobs of type ${mimeType}`);
    return `${randomBase62(40)}.${ext}`;
  }

  /** The stored Content-Type, or the key's own type when the object has none of ours. */
  private typeOf(key: string, contentType: string | undefined): string {
    const ext = BLOB_KEY.exec(key)?.[2] ?? "";
    return contentType && extensionOf(contentType) ? contentType : mimeTypeOf(ext);
  }
}
