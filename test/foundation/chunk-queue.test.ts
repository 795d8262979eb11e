import { describe, expect, it } from "vitest";
import { ChunkQueue } from "../../src/upstreams/chunk-queue.js";

const b = (text: string) => Buffer.from(text);

describe("the chunks between an answer's socket and their reader", () => {
  it("hands a waiting reader the next chunk, then the end once every chunk is read", async () => {
    const queue = new ChunkQueue();
    const first = queue.next();
    queue.push(b("a"));
    expect(String((await first).value)).toBe("a");
    queue.push(b("b"));
    queue.push(b("c"));
    queue.end();
    expect(queue.length).toBe(2);
    expect(queue.finished).toBe(false);
    expect(String((await queue.next()).value)).toBe("b");
    expect(String((await queue.next()).value)).toBe("c");
    expect(queue.finished).toBe(true);
    expect(await queue.next()).toEqual({ value: undefined, done: true });
  });

  it("tells a failure only after the chunks before it, and the first failure only", async () => {
    const queue = new ChunkQueue();
    queue.push(b("a"));
    queue.fail(new Error("first"));
    queue.fail(new Error("second"));
    expect(String((await queue.next()).value)).toBe("a");
    await expect(queue.next()).rejects.toThrow("first");
    await expect(queue.next()).rejects.toThrow("first");
    const waiting = new ChunkQueue();
    const read = waiting.next();
    waiting.fail(new Error("cut"));
    await expect(read).rejects.toThrow("cut");
  });

  it("drops the chunks not read and ends a waiting read when the reader is done", async () => {
    const queue = new ChunkQueue();
    queue.push(b("a"));
    queue.drop();
    expect(queue.length).toBe(0);
    expect(await queue.next()).toEqual({ value: undefined, done: true });
    const waiting = new ChunkQueue();
    const read = waiting.next();
    waiting.drop();
    expect(await read).toEqual({ value: undefined, done: true });
  });
});
