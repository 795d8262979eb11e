import { createReadStream } from "node:fs";
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomBase62 } from "../core/ids.js";
import type { BlobStore, StoredBlob } from "./blob-store.js";

const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" };
const MIME_OF: Record<string, string> = { png: "image/png", jpg: "image/jpeg", webp: "image/webp" };

/** 40 base62 characters (about 238 bits): a key nobody can guess or enumerate. */
export const BLOB_KEY = /^([A-Za-z0-9]{40})\.(png|jpg|webp)$/;

/**
 * Blobs in a local folder: `<root>/<first two key characters>/<key>.<ext>`. Files are written
 * to a temporary name and renamed, so a reader never sees half a file.
 */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async put(bytes: Buffer, mimeType: string): Promise<string> {
    const ext = EXTENSIONS[mimeType];
    if (!ext) throw new Error(`cannot store blobs of type ${mimeType}`);
    const id = randomBase62(40);
    const key = `${id}.${ext}`;
    const dir = path.join(this.root, id.slice(0, 2));
    await mkdir(dir, { recursive: true });
    const temp = path.join(dir, `.${key}.${process.pid}.tmp`);
    await writeFile(temp, bytes);
    await rename(temp, path.join(dir, key));
    return key;
  }

  async open(key: string): Promise<StoredBlob | null> {
    const match = BLOB_KEY.exec(key);
    if (!match?.[1] || !match[2]) return null;
    const file = path.join(this.root, match[1].slice(0, 2), key);
    try {
      const info = await stat(file);
      if (!info.isFile()) return null;
      return {
        mimeType: MIME_OF[match[2]] ?? "application/octet-stream",
        size: info.size,
        stream: createReadStream(file),
      };
    } catch {
      return null;
    }
  }
}
