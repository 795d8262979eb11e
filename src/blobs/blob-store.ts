/**
 * Where generated images live. The local folder store is the one built in; an S3-compatible
 * bucket would implement the same interface (and answer URLs of its own) when configured.
 */
export interface BlobStore {
  /** Stores the bytes under a new unguessable key; answers the key (file name with extension). */
  put(bytes: Buffer, mimeType: string): Promise<string>;
  /** Opens a stored blob for reading, or null when the key does not exist. */
  open(key: string): Promise<StoredBlob | null>;
}

export interface StoredBlob {
  mimeType: string;
  size: number;
  stream: NodeJS.ReadableStream;
}
