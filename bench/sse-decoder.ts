/**
 * The upstream's server-sent events decoded from bytes, alone: CPU per stream of the gateway's
 * decoder (`SseByteDecoder`) against the same event decoder fed by a TextDecoder made for each
 * stream (how every chunk was decoded before), on a chat stream like the minimal upstream's (7
 * events in one chunk), in ASCII only and with a few characters beyond it, and on the latter cut
 * into chunks of 64 bytes (characters cut between chunks, as a slow upstream's may be).
 *
 * Usage: node --import tsx bench/sse-decoder.ts [--streams 100000] [--rounds 6]
 */
import { parseArgs } from "node:util";
import { SseByteDecoder, SseEventDecoder } from "../src/upstreams/gemini/sse-reader.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: { streams: { type: "string", default: "100000" }, rounds: { type: "string", default: "6" } },
});
const streams = Number(values.streams);
const rounds = Number(values.rounds);

const event = (content: string) =>
  `data: {"id":"chatcmpl-minimal","object":"chat.completion.chunk","created":1700000000,"model":"minimal-upstream","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const stream = (words: string[]) => Buffer.from(`${words.map(event).join("")}data: [DONE]\n\n`);
const ascii = stream(["", "Hello", " there,", " friend,", " how are", " you?"]);
const wider = stream(["", "Hello", " there —", " friend,", " how are", " you ✓"]);
const cut: Buffer[] = [];
for (let at = 0; at < wider.length; at += 64) cut.push(wider.subarray(at, at + 64));
const shapes = [
  ["ASCII, one chunk", [ascii]],
  ["not only ASCII, one chunk", [wider]],
  ["not only ASCII, 64-byte chunks", cut],
] as const;

/** What decoded every chunk before: a TextDecoder per stream in front of the event decoder. */
class TextDecoderFirst {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly events = new SseEventDecoder();
  push(chunk: Uint8Array): string[] {
    return this.events.push(this.decoder.decode(chunk, { stream: true }));
  }
  finish(): string[] {
    const out = this.events.push(this.decoder.decode());
    out.push(...this.events.finish());
    return out;
  }
}

const ways = { "TextDecoder first": TextDecoderFirst, SseByteDecoder } as const;
const results = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const [name, Decoder] of Object.entries(ways)) {
    for (const [shape, chunks] of shapes) {
      const start = process.cpuUsage();
      let events = 0;
      for (let i = 0; i < streams; i++) {
        const decoder = new Decoder();
        for (const chunk of chunks) events += decoder.push(chunk).length;
        events += decoder.finish().length;
      }
      const used = process.cpuUsage(start);
      if (events !== streams * 7) throw new Error(`${name} read ${events / streams} events per stream, not 7`);
      const key = `${name}, ${shape}`;
      results.set(key, [...(results.get(key) ?? []), (used.user + used.system) / streams]);
    }
  }
}
console.log(
  `${ascii.length} bytes, 7 events per stream; µs of CPU per stream, median (min to max) of ${rounds} rounds`,
);
for (const [key, values] of results) {
  const line = `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)} to ${Math.max(...values).toFixed(2)})`;
  console.log(`  ${key.padEnd(52)} ${line}`);
}
