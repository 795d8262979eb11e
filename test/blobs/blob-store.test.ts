import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlobStore, BlobTooLargeError } from "../../src/blobs/blob-store.js";
import { openBlobStore } from "../../src/blobs/open-blob-store.js";
import { loadConfig } from "../../src/config/load.js";
import { startTestBucket, type TestBucket } from "../support/s3.js";

/** One implementation under test: a store per area, and what it left behind in that area. */
interface Subject {
  store(area: string): BlobStore;
  leftovers(area: string): Promise<string[]>;
  close(): Promise<void>;
}

async function localSubject(): Promise<Subject> {
  const root = mkdtempSync(path.join(os.tmpdir(), "mg-blobs-"));
  const config = loadConfig({}, { dataDir: root, blobs: { url: `file://${root}/stored` } });
  return {
    store: (area) => openBlobStore(config, area),
    async leftovers(area) {
      const dir = path.join(root, "stored", area);
      try {
        return readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name);
      } catch {
        return [];
      }
    },
    async close() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function s3Subject(): Promise<Subject> {
  const bucket: TestBucket = await startTestBucket();
  const config = loadConfig({}, { dataDir: os.tmpdir(), ...bucket.settings() });
  return {
    store: (area) => openBlobStore(config, area),
    leftovers: (area) => bucket.list(`${area}/`),
    close: () => bucket.close(),
  };
}

async function read(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

const MIB = 1024 * 1024;
const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

/** `count` chunks of one MiB, each of its own byte value. */
function* mebibytes(count: number) {
  for (let i = 0; i < count; i++) yield Buffer.alloc(MIB, i);
}

const SUBJECTS: [string, () => Promise<Subject>][] = [
  ["a local folder", localSubject],
  ["an S3 bucket", s3Subject],
];

for (const [name, start] of SUBJECTS) {
  describe(`the blob store in ${name}`, () => {
    let subject: Subject;
    let store: BlobStore;
    beforeAll(async () => {
      subject = await start();
      store = subject.store("contract");
    });
    afterAll(async () => {
      await subject?.close();
    });

    it("stores a stream under a key of its type and reads it back whole or in part", async () => {
      const key = await store.putStream(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), "audio/mpeg", {
        maxBytes: 5000,
      });
      expect(key).toMatch(/^[A-Za-z0-9]{40}\.mp3$/);
      expect(await store.stat(key)).toEqual({ mimeType: "audio/mpeg", size: 5000 });
      const whole = await store.open(key);
      expect(whole?.mimeType).toBe("audio/mpeg");
      expect(whole?.size).toBe(5000);
      expect((await read(whole?.stream as NodeJS.ReadableStream)).equals(bytes)).toBe(true);
      const part = await store.open(key, { start: 100, end: 199 });
      expect(part?.size).toBe(5000);
      expect((await read(part?.stream as NodeJS.ReadableStream)).equals(bytes.subarray(100, 200))).toBe(true);
      const last = await store.open(key, { start: 4999, end: 4999 });
      expect((await read(last?.stream as NodeJS.ReadableStream)).equals(bytes.subarray(4999))).toBe(true);
    });

    it("stores bytes put whole, under fresh keys, with their type", async () => {
      const first = await store.put(bytes, "image/png");
      const second = await store.put(bytes, "image/png");
      expect(first).toMatch(/^[A-Za-z0-9]{40}\.png$/);
      expect(second).not.toBe(first);
      expect(await store.stat(first)).toEqual({ mimeType: "image/png", size: 5000 });
      const blob = await store.open(second);
      expect((await read(blob?.stream as NodeJS.ReadableStream)).equals(bytes)).toBe(true);
      await expect(store.put(bytes, "text/html")).rejects.toThrow(/text\/html/);
    });

    it("stores a big image put whole as it stores a small one", async () => {
      const big = Buffer.concat([bytes, Buffer.alloc(MIB, 9)]);
      const key = await store.put(big, "image/png");
      expect(await store.stat(key)).toEqual({ mimeType: "image/png", size: big.length });
      const blob = await store.open(key);
      expect((await read(blob?.stream as NodeJS.ReadableStream)).equals(big)).toBe(true);
    });

    it("streams a file of several parts in and reads any range of it back", async () => {
      const key = await store.putStream(Readable.from(mebibytes(12)), "video/mp4", { maxBytes: 12 * MIB });
      expect(await store.stat(key)).toEqual({ mimeType: "video/mp4", size: 12 * MIB });
      // Bytes 5 MiB - 2 to 5 MiB + 1 straddle the chunks of value 4 and 5.
      const part = await store.open(key, { start: 5 * MIB - 2, end: 5 * MIB + 1 });
      expect([...(await read(part?.stream as NodeJS.ReadableStream))]).toEqual([4, 4, 5, 5]);
    });

    it("refuses a stream past its bound and keeps nothing of it, in one part or several", async () => {
      const area = subject.store("bounded");
      await expect(
        area.putStream(Readable.from([bytes, bytes]), "video/mp4", { maxBytes: 6000 }),
      ).rejects.toBeInstanceOf(BlobTooLargeError);
      await expect(
        area.putStream(Readable.from(mebibytes(12)), "video/mp4", { maxBytes: 11 * MIB }),
      ).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await subject.leftovers("bounded")).toEqual([]);
    });

    it("keeps nothing of a stream that fails on its way in", async () => {
      const area = subject.store("broken");
      async function* breaks() {
        yield* mebibytes(7);
        throw new Error("the source went away");
      }
      await expect(area.putStream(breaks(), "audio/wav", { maxBytes: 20 * MIB })).rejects.toThrow(/went away/);
      expect(await subject.leftovers("broken")).toEqual([]);
    });

    it("answers null for keys it does not hold or could not have made", async () => {
      for (const key of [`${"a".repeat(40)}.wav`, "../../etc/passwd", `${"a".repeat(40)}.exe`, ""]) {
        expect(await store.open(key), key).toBeNull();
        expect(await store.stat(key), key).toBeNull();
      }
    });

    it("deletes a stored blob once; a second delete or an unknown key answers false", async () => {
      const key = await store.put(bytes, "image/png");
      expect(await store.delete(key)).toBe(true);
      expect(await store.open(key)).toBeNull();
      expect(await store.stat(key)).toBeNull();
      expect(await store.delete(key)).toBe(false);
      expect(await store.delete("../../etc/passwd")).toBe(false);
    });

    it("keeps each area apart: a key of one is unknown to another", async () => {
      const key = await subject.store("left").put(bytes, "image/webp");
      expect(await subject.store("right").stat(key)).toBeNull();
      expect(await subject.store("left").stat(key)).toEqual({ mimeType: "image/webp", size: 5000 });
    });

    it("hands out no download URL when the gateway sends the bytes itself", async () => {
      const key = await store.put(bytes, "image/png");
      expect(await store.downloadUrl(key)).toBeNull();
    });
  });
}

describe("the blob store in a local folder, once its folders are removed", () => {
  it("makes a removed folder again and keeps every image put or streamed after it", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "mg-blobs-gone-"));
    try {
      const config = loadConfig({}, { dataDir: root, blobs: { url: `file://${root}/stored` } });
      const store = openBlobStore(config, "images");
      // 200 keys fill 200 or so of the 3,844 two-character folders: the next 200 land in
      // folders the store made before, some of them, with all but certainty.
      for (let i = 0; i < 200; i++) await store.put(bytes, "image/png");
      rmSync(path.join(root, "stored", "images"), { recursive: true, force: true });
      const keys: string[] = [];
      for (let i = 0; i < 200; i++) {
        keys.push(
          i % 2 === 0
            ? await store.put(bytes, "image/png")
            : await store.putStream(Readable.from([bytes]), "image/png", { maxBytes: 5000 }),
        );
      }
      for (const key of keys) expect(await store.stat(key), key).toEqual({ mimeType: "image/png", size: 5000 });
      const files = readdirSync(path.join(root, "stored", "images"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name);
      expect(files.sort()).toEqual([...keys].sort());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("the blob store in a local folder written before it started", () => {
  it("writes into the folders an earlier store left, and into new ones, and reads back both stores' files", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "mg-blobs-again-"));
    try {
      const config = loadConfig({}, { dataDir: root, blobs: { url: `file://${root}/stored` } });
      const earlier = openBlobStore(config, "images");
      const keys: string[] = [];
      for (let i = 0; i < 200; i++) keys.push(await earlier.put(bytes, "image/png"));
      const later = openBlobStore(config, "images");
      const puts = Array.from({ length: 200 }, (_, i) =>
        i % 2 === 0
          ? later.put(i % 4 === 0 ? bytes : Buffer.alloc(2 * MIB, 7), "image/png")
          : later.putStream(Readable.from([bytes]), "image/png", { maxBytes: 5000 }),
      );
      keys.push(...(await Promise.all(puts)));
      for (const key of keys) expect((await later.stat(key))?.mimeType, key).toBe("image/png");
      for (const key of keys.slice(0, 200)) expect(await read((await later.open(key))!.stream)).toEqual(bytes);
      const files = readdirSync(path.join(root, "stored", "images"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name);
      expect(files.sort()).toEqual([...keys].sort());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
