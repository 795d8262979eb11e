import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { BlobTooLargeError } from "./blob-store.js";
import { LocalBlobStore } from "./local-blob-store.js";

const root = mkdtempSync(path.join(os.tmpdir(), "mg-blobs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function read(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe("the local blob store", () => {
  const store = new LocalBlobStore(root);
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

  it("stores a stream under a key of its type and reads it back whole or in part", async () => {
    const key = await store.putStream(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), "audio/mpeg", {
      maxBytes: 5000,
    });
    expect(key).toMatch(/^[A-Za-z0-9]{40}\.mp3$/);
    const whole = await store.open(key);
    expect(whole?.mimeType).toBe("audio/mpeg");
    expect(whole?.size).toBe(5000);
    expect((await read(whole?.stream as NodeJS.ReadableStream)).equals(bytes)).toBe(true);
    const part = await store.open(key, { start: 100, end: 199 });
    expect(part?.size).toBe(5000);
    expect((await read(part?.stream as NodeJS.ReadableStream)).equals(bytes.subarray(100, 200))).toBe(true);
  });

  it("refuses a stream past its bound and keeps nothing of it", async () => {
    const dir = path.join(root, "bounded");
    const bounded = new LocalBlobStore(dir);
    await expect(
      bounded.putStream(Readable.from([bytes, bytes]), "video/mp4", { maxBytes: 6000 }),
    ).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(filesUnder(dir)).toEqual([]);
  });

  it("answers null for keys it does not hold or could not have made", async () => {
    expect(await store.open(`${"a".repeat(40)}.wav`)).toBeNull();
    expect(await store.open("../../etc/passwd")).toBeNull();
    expect(await store.open(`${"a".repeat(40)}.exe`)).toBeNull();
  });

  it("deletes a stored blob once; a second delete or an unknown key answers false", async () => {
    const key = await store.put(bytes, "image/png");
    expect(await store.delete(key)).toBe(true);
    expect(await store.open(key)).toBeNull();
    expect(await store.delete(key)).toBe(false);
    expect(await store.delete("../../etc/passwd")).toBe(false);
  });
});
