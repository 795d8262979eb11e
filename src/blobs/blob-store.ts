/**
 * Where stored files live: generated images and copies of task results. Two implementations: a
 * local folder (`LocalBlobStore`) and an S3-compatible bucket (`S3BlobStore`) that several
 * gateway instances share; `openBlobStore` picks one from `BLOB_URL`.
 */
export interface BlobStore {
  /** Stores the bytes under a new unguessable key; answers the key (file name with extension). */
  put(bytes: Buffer, mimeType: string): Promise<string>;
  /**
   * Stores a stream under a new unguessable key without holding it in memory. Past `maxBytes`
   * the write stops, nothing is kept and the promise rejects with a `BlobTooLargeError`.
   */
  putStream(
    source: AsyncIterable<Buffer | Uint8Array>,
    mimeType: string,
    limits: { maxBytes: number },
  ): Promise<string>;
  /** Opens a stored blob for reading (only `range` of it when given), or null when the key does not exist. */
  open(key: string, range?: ByteRange): Promise<StoredBlob | null>;
  /** Type and size of a stored blob without reading it, or null when the key does not exist. */
  stat(key: string): Promise<BlobInfo | null>;
  /** Removes a stored blob; answers whether it existed. A key that never existed is not an error. */
  delete(key: string): Promise<boolean>;
  /**
   * A short-lived URL a client may fetch the blob from without the gateway, when the store is set
   * to hand downloads out that way (an S3 bucket with `BLOB_DOWNLOADS=redirect`); null when the
   * gateway sends the bytes itself. It does not check that the key exists.
   */
  downloadUrl(key: string): Promise<string | null>;
}

export interface BlobInfo {
  mimeType: string;
  size: number;
}

/** Bytes `start` to `end` of a blob, both included (as in an HTTP Range header). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredBlob extends BlobInfo {
  /** The bytes (only the range asked for, if any); `size` is the whole blob's. */
  stream: NodeJS.ReadableStream;
}

/** A stream given to `putStream` was larger than its bound. */
export class BlobTooLargeError extends Error {
  override readonly name = "BlobTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`the file is larger than the limit of ${maxBytes} bytes`);
  }
}
