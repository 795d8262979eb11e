import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readSseEvents, SseEventDecoder } from "../../src/upstreams/gemini/sse-reader.js";

function decodeAll(pieces: string[]): string[] {
  const decoder = new SseEventDecoder();
  const out: string[] = [];
  for (const piece of pieces) out.push(...decoder.push(piece));
  out.push(...decoder.finish());
  return out;
}

/** Cuts text at the given positions. */
function cut(text: string, positions: number[]): string[] {
  const points = [...new Set(positions.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const p of points) {
    pieces.push(text.slice(start, p));
    start = p;
  }
  pieces.push(text.slice(start));
  return pieces;
}

const EVENTS = ['{"a":1}', '{"text":"two words"}', '{"usageMetadata":{"promptTokenCount":3}}'];

describe("SSE event reader", () => {
  for (const [name, ending] of [
    ["\\n\\n", "\n"],
    ["\\r\\r", "\r"],
    ["\\r\\n\\r\\n", "\r\n"],
  ]) {
    it(`reads events separated by ${name}`, () => {
      const text = EVENTS.map((e) => `data: ${e}${ending}${ending}`).join("");
      expect(decodeAll([text])).toEqual(EVENTS);
    });
  }

  it("skips comment lines and fields other than data", () => {
    const text = ': ping\r\n\r\nevent: message\r\nid: 7\r\ndata: {"a":1}\r\n\r\n:keep-alive\n\ndata:{"b":2}\n\n';
    expect(decodeAll([text])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it("joins the data lines of one event with a line break", () => {
    expect(decodeAll(['data: {"a":\ndata: 1}\n\n'])).toEqual(['{"a":\n1}']);
  });

  it("keeps a last event that has no blank line after it", () => {
    expect(decodeAll(['data: {"a":1}\r\n\r\ndata: {"b":2}'])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it("reads the same events however the text is cut, even mid-line or inside a CRLF", () => {
    const text = `: hello\r\n\r\n${EVENTS.map((e) => `data: ${e}\r\n\r\n`).join("")}`;
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (positions) => {
        expect(decodeAll(cut(text, positions))).toEqual(EVENTS);
      }),
      { numRuns: 300 },
    );
  });

  it("does not end an event early when a CRLF is split between two chunks", () => {
    const decoder = new SseEventDecoder();
    expect(decoder.push('data: {"a":1}\r')).toEqual([]);
    expect(decoder.push("\n\r")).toEqual([]);
    expect(decoder.push("\n")).toEqual(['{"a":1}']);
  });

  it("decodes multi-byte characters split between byte chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo ✓"}\r\n\r\n');
    async function* source() {
      for (let i = 0; i < bytes.length; i++) yield bytes.slice(i, i + 1);
    }
    const out: string[] = [];
    for await (const data of readSseEvents(source())) out.push(data);
    expect(out).toEqual(['{"t":"héllo ✓"}']);
  });
});
