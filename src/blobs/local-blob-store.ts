import {
  createReadStream,
  createWriteStream,
  open as openFile,
  writeFileSync,
  writeFile as writeNewFile,
} from "node:fs";
import { mkdir, readdir, rename, rm, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { randomBase62 } from "../core/ids.js";
import { type BlobInfo, type BlobStore, BlobTooLargeError, type ByteRange, type StoredBlob } from "./blob-store.js";
import { BLOB_KEY, extensionOf, mimeTypeOf } from "./blob-types.js";

export { BLOB_KEY } from "./blob-types.js";

/**
 * Files up to this size are written at once on the calling thread, on a local disk. Handing a
 * write to libuv's thread pool costs tens of µs of CPU per file call (three: open, write, close),
 * more than copying this many bytes into the page cache; bigger files go through the pool, where
 * the copy itself dominates and the event loop should not wait for it.
 */
export const WRITE_AT_ONCE_BYTES = 256 * 1024;

/**
 * File systems (statfs magic numbers) on a local disk or in memory: ext2/3/4, XFS, Btrfs, tmpfs,
 * overlayfs, ZFS, F2FS. On any other (NFS, SMB, FUSE mounts) a write may wait for a network, so
 * every write goes through the thread pool.
 */
const LOCAL_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/** Writes a new file whole (failing if it exists): at once when small and `local`, else through the pool. */
function writeNew(file: string, bytes: Buffer, local: boolean): Promise<void> {
  if (local && bytes.length <= WRITE_AT_ONCE_BYTES) {
    try {
      writeFileSync(file, bytes, { flag: "wx" });
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }
  // The callback API: lighter than `fs/promises` (no FileHandle per file).
  return new Promise((resolve, reject) =>
    writeNewFile(file, bytes, { flag: "wx" }, (err) => (err ? reject(err) : resolve())),
  );
}

function openNew(file: string): Promise<number> {
  return new Promise((resolve, reject) => openFile(file, "wx", (err, fd) => (err ? reject(err) : resolve(fd))));
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === "ENOENT";
}

/**
 * Blobs in a local folder: `<root>/<first two key characters>/<key>.<ext>`. A reader never sees
 * half a file: a stream is written to a temporary name and renamed once whole; bytes put whole
 * are written straight under their key, which is random and handed out only once the file is
 * whole, so no reader can ask for it sooner.
 *
 * A stored image is on the hot path of every image request, so `put` makes as few file calls as
 * it can: the folders are known (at most 62 x 62 of them: those under the root when the store
 * first writes, from one listing, then those it makes) instead of made again for every write, the
 * file is opened, written and closed without a rename, and a small file on a local disk without
 * the thread pool (see WRITE_AT_ONCE_BYTES).
 */
export class LocalBlobStore implements BlobStore {
  /** Folders known to exist: found under the root at the first write, or made by this store. */
  private readonly folders = new Set<string>();
  /** Whether the folder is on a local disk (see LOCAL_FILE_SYSTEMS); known once the root is seen. */
  private local = false;
  private fileSystemKnown = false;
  /** The listing of the root's folders, read once at the first write. */
  private listed: Promise<void> | null = null;

  constructor(private readonly root: string) {}

  async put(bytes: Buffer, mimeType: string): Promise<string> {
    const target = this.newTarget(mimeType);
    if (!this.folders.has(target.dir)) await this.ensureFolder(target.dir);
    try {
      await writeNew(target.file, bytes, this.local);
    } catch (err) {
      // The folder went away since it was made (an operator cleared the store): make it again.
      if (!isMissing(err)) return this.failedPut(target.file, err);
      await this.makeFolder(target.dir);
      await writeNew(target.file, bytes, this.local).catch((again) => this.failedPut(target.file, again));
    }
    return target.key;
  }

  /** Removes what a failed write left (a full disk leaves a partial file) and fails the put. */
  private async failedPut(file: string, err: unknown): Promise<never> {
    // A file already under that key is another's: left alone.
    if ((err as NodeJS.ErrnoException)?.code !== "EEXIST") await rm(file, { force: true });
    throw err;
  }

  async putStream(
    source: AsyncIterable<Buffer | Uint8Array>,
    mimeType: string,
    limits: { maxBytes: number },
  ): Promise<string> {
    const target = this.newTarget(mimeType);
    const fd = await this.openTemp(target);
    let size = 0;
    const bound = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limits.maxBytes) done(new BlobTooLargeError(limits.maxBytes));
        else done(null, chunk);
      },
    });
    try {
      await pipeline(source, bound, createWriteStream(target.temp, { fd }));
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

  /** Opens a stream's temporary file, its folder made first when not known to exist (or gone since). */
  private async openTemp(target: { dir: string; temp: string }): Promise<number> {
    if (!this.folders.has(target.dir)) await this.ensureFolder(target.dir);
    try {
      return await openNew(target.temp);
    } catch (err) {
      if (!isMissing(err)) throw err;
      await this.makeFolder(target.dir);
      return openNew(target.temp);
    }
  }

  /**
   * A folder not known yet: the root's folders are listed first (once: a store written before
   * this start has most of them), and the folder is made only when not among them.
   */
  private async ensureFolder(dir: string): Promise<void> {
    this.listed ??= this.listFolders();
    await this.listed;
    if (!this.folders.has(dir)) await this.makeFolder(dir);
  }

  private async listFolders(): Promise<void> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => null);
    if (!entries) return; // no root yet: the first folder made makes it
    await this.learnFileSystem(this.root);
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name.length === 2) this.folders.add(path.join(this.root, entry.name));
    }
  }

  private async learnFileSystem(dir: string): Promise<void> {
    if (this.fileSystemKnown) return;
    const found = await statfs(dir).catch(() => null);
    this.local = found !== null && LOCAL_FILE_SYSTEMS.has(found.type);
    this.fileSystemKnown = true;
  }

  private async makeFolder(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await this.learnFileSystem(dir);
    this.folders.add(dir);
  }

  private newTarget(mimeType: string) {
    const ext = extensionOf(mimeType);
    if (!ext) throw new Error(`cannot store blobs of type ${mimeType}`);
    const id = randomBase62(40);
    const key = `${id}.${ext}`;
    const dir = path.join(this.root, id.slice(0, 2));
    return { key, dir, file: path.join(dir, key), temp: path.join(dir, `.${key}.${process.pid}.tmp`) };
  }
}
