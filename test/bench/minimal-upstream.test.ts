import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MinimalUpstream,
  PACED_DELAY_MS,
  realisticPng,
  startMinimalUpstream,
} from "../../bench/minimal-upstream.js";

let upstream: MinimalUpstream;
beforeAll(async () => {
  upstream = await startMinimalUpstream();
});
afterAll(() => upstream.close());

const post = (path: string, body: unknown) =>
  fetch(`${upstream.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const dataLines = (text: string) => text.split(/\r?\n/).filter((line) => line.startsWith("data: "));
const content = { contents: [{ role: "user", parts: [{ text: "hello" }] }] };

describe("the minimal upstream of the benchmark", () => {
  it("answers generateContent with a fixed Gemini answer that reports usage", async () => {
    const res = await post("/v1beta/models/gemini-2.5-flash:generateContent", content);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as any;
    expect(answer.candidates[0].content.parts[0].text).toMatch(/harbor/);
    expect(answer.candidates[0].finishReason).toBe("STOP");
    expect(answer.usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
  });

  it("streams three Gemini chunks, the last one finished", async () => {
    const res = await post("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", content);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const chunks = dataLines(await res.text()).map((line) => JSON.parse(line.slice(6)));
    expect(chunks).toHaveLength(3);
    expect(chunks[2].candidates[0].finishReason).toBe("STOP");
  });

  it("answers an image model with a 1024x1024 PNG as big as a real 1K image", async () => {
    const res = await post("/v1beta/models/image-model:generateContent", content);
    const answer = (await res.json()) as any;
    const png = Buffer.from(answer.candidates[0].content.parts[0].inlineData.data, "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 1024]);
    expect(png.length).toBeGreaterThan(1_000_000);
  });

  it("makes a valid PNG: every chunk's CRC holds and its pixels inflate to 1024 rows of 1024 RGB pixels", () => {
    const png = realisticPng();
    const idat: Buffer[] = [];
    for (let at = 8; at < png.length; ) {
      const length = png.readUInt32BE(at);
      const typed = png.subarray(at + 4, at + 8 + length);
      expect(zlib.crc32(typed) >>> 0).toBe(png.readUInt32BE(at + 8 + length));
      if (typed.toString("latin1", 0, 4) === "IDAT") idat.push(typed.subarray(4));
      at += 12 + length;
    }
    expect(zlib.inflateSync(Buffer.concat(idat)).length).toBe(1024 * (1 + 1024 * 3));
  });

  it("paces the stream of a paced model: the second chunk comes 200 ms after the first", async () => {
    const started = performance.now();
    const res = await post("/v1beta/models/bench-paced:streamGenerateContent?alt=sse", content);
    const reader = res.body!.getReader();
    await reader.read();
    const first = performance.now() - started;
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    const end = performance.now() - started;
    expect(first).toBeLessThan(PACED_DELAY_MS / 2);
    expect(end).toBeGreaterThanOrEqual(PACED_DELAY_MS - 5);
    expect(dataLines(rest)).toHaveLength(1);
  });

  it("answers chat completions plainly, or as a stream of chunks ending in [DONE] when asked to stream", async () => {
    const messages = [{ role: "user", content: "hello" }];
    const plain = (await (await post("/v1/chat/completions", { model: "m", messages })).json()) as any;
    expect(plain.choices[0].message.content).toMatch(/harbor/);
    expect(plain.usage.completion_tokens).toBeGreaterThan(0);

    const res = await post("/v1/chat/completions", { model: "m", messages, stream: true });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const lines = dataLines(await res.text());
    expect(lines.at(-1)).toBe("data: [DONE]");
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.slice(6)));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe(plain.choices[0].message.content);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "stop")).toBe(true);
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
  });

  it("counts what it answered", async () => {
    const before = upstream.handled();
    await (await post("/v1/chat/completions", {})).text();
    expect(upstream.handled()).toBe(before + 1);
  });
});
