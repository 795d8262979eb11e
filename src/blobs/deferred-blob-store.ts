import type { BlobInfo, BlobStore, ByteRange, StoredBlob } from "./blob-store.js";

/**
 * A store built on its first use. The S3 store comes this way, so that the AWS SDK (a fifth of a
 * second and some 25 MiB to load) is loaded only by gateways that keep their files in a bucket.
 */
export class DeferredBlobStore implements BlobStore {
  private loaded: Promise<BlobStore> | null = null;

  constructor(private readonly load: () => Promise<BlobStore>) {}

  private get store(): Promise<BlobStore> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  async put(bytes: Buffer, mimeType: string): Promise<string> {
    return (await this.store).put(bytes, mimeType);
  }

  async putStream(
    source: AsyncIterable<Buffer | Uint8Array>,
    mimeType: string,
    limits: { maxBytes: number },
  ): Promise<string> {
    return (await this.store).putStream(source, mimeType, limits);
  }

  async open(key: string, range?: ByteRange): Promise<StoredBlob | null> {
    return (await this.store).open(key, range);
  }

  async stat(key: string): Promise<BlobInfo | null> {
    return (await this.store).stat(key);
  }

  async delete(key: string): Promise<boolean> {
    return (await this.store).delete(key);
  }

  async downloadUrl(key: string): Promise<string | null> {
    return (await this.store).downloadUrl(key);
  }
}
