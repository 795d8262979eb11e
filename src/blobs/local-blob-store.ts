import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { randomBase62 } from "../core/ids.js";
import { type BlobInfo, type BlobStore, BlobTooLargeError, type ByteRange, type StoredBlob } from "./blob-store.js";
import { BLOB_KEY, extensionOf, mimeTypeOf } from "./blob-types.js";

export { BLOB_KEY } from "./blob-types.js";

/**
 * Blobs in a local folder: `<root>/<first two key characters>/<key>.<ext>`. Files are written
 * to a temporary name and renamed, so a reader never sees half a file.
 */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async put(bytes: Buffer, mimeType: string): Promise<string> {
    const target = await this.newTarget(mimeType);
    await writeFile(target.temp, bytes);
    await rename(target.temp, target.file);
    return target.key;
  }

  async putStream(
    source: AsyncIterable<Buffer | Uint8Array>,
    mimeType: string,
    limits: { maxBytes: number },
  ): Promise<string> {
    const target = await this.newTarget(mimeType);
    let size = 0;
    const bound = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limits.maxBytes) done(new BlobTooLargeError(limits.maxBytes));
        else done(null, chunk);
      },
    });
    try {
      await pipeline(source, bound, createWriteStream(target.temp));
      await rename(target.temp, target.file);
    } catch (err) {
      await rm(target.temp, { force: true });
      throw err;
    }
    return target.key;
  }

  async open(key: string, range?: ByteRange): Promise<StoredBlob | null> {
    const found = await this.find(key);
    if (!found) return null;
    const stream = createReadStream(found.file, range ? { start: range.start, end: range.end } : {});
    return { mimeType: found.mimeType, size: found.size, stream };
  }

  async stat(key: string): Promise<BlobInfo | null> {
    const found = await this.find(key);
    return found ? { mimeType: found.mimeType, size: found.size } : null;
  }

  async delete(key: string): Promise<boolean> {
    const found = await this.find(key);
    if (!found) return false;
    await rm(found.file, { force: true });
    return true;
  }

  /** A folder has no URL of its own: the gateway always sends the bytes. */
  async downloadUrl(_key: string): Promise<string | null> {
    return null;
  }

  private async find(key: string) {
    const match = BLOB_KEY.exec(key);
    if (!match?.[1] || !match[2]) return null;
    const file = path.join(this.root, match[1].slice(0, 2), key);
    try {
      const info = await stat(file);
      return info.isFile() ? { file, size: info.size, mimeType: mimeTypeOf(match[2]) } : null;
    } catch {
      return null;
    }
  }

  private async newTarget(mimeType: string) {
    const ext = extensionOf(mimeType);
    if (!ext) throw new Error(`cannot store blobs of type ${mimeType}`);
    const id = randomBase62(40);
    const key = `${id}.${ext}`;
    const dir = path.join(this.root, id.slice(0, 2));
    await mkdir(dir, { recursive: true });
    return { key, file: path.join(dir, key), temp: path.join(dir, `.${key}.${process.pid}.tmp`) };
  }
}
