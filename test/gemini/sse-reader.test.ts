import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  endsWholeUtf8,
  readSseEvents,
  SseByteDecoder,
  SseEventDecoder,
} from "../../src/upstreams/gemini/sse-reader.js";

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

  it("reads events whose lines end in any mix of LF, CR and CRLF, however the text is cut", () => {
    const ending = fc.constantFrom("\n", "\r", "\r\n");
    const value = fc.string({ maxLength: 40 }).filter((v) => !/[\r\n]/.test(v));
    const line = fc.record({ kind: fc.constantFrom("data", "data", "comment", "other"), value, ending });
    const event = fc.record({ lines: fc.array(line, { minLength: 1, maxLength: 4 }), blank: ending });
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (events, at) => {
          let text = "";
          const expected: string[] = [];
          for (const e of events) {
            const data: string[] = [];
            for (const l of e.lines) {
              if (l.kind === "data") {
                text += `data: ${l.value}${l.ending}`;
                data.push(l.value);
              } else text += `${l.kind === "comment" ? ":" : "id:"}${l.value}${l.ending}`;
            }
            // A blank line right after a lone CR must not start with LF: the two would be one CRLF.
            const last = e.lines[e.lines.length - 1]?.ending;
            text += last === "\r" && e.blank === "\n" ? "\r" : e.blank;
            if (data.length > 0) expected.push(data.join("\n"));
          }
          expect(decodeAll(cut(text, at))).toEqual(expected);
        },
      ),
      { numRuns: 500 },
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

  it("decodes bytes as one TextDecoder over the whole stream would, however the bytes are cut", () => {
    // Pieces of a stream's bytes: event text, characters of two, three and four bytes, byte order
    // marks, and malformed bytes (a lone continuation byte, a byte never used, a cut sequence).
    const piece = fc.constantFrom(
      ...["data: ", '{"t":"a"}', "\n\n", "\r\n", "é", "✓", "😀", "\ufeff", "x"].map((t) => [
        ...new TextEncoder().encode(t),
      ]),
      [0x80],
      [0xff],
      [0xe2, 0x9c],
      [0xf0, 0x9f, 0x98],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 12 }), (pieces, positions) => {
        const bytes = Uint8Array.from(pieces.flat());
        const expected = decodeAll([new TextDecoder("utf-8").decode(bytes)]);
        const points = [...new Set(positions.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
        const decoder = new SseByteDecoder();
        const out: string[] = [];
        let start = 0;
        for (const p of [...points, bytes.length]) {
          out.push(...decoder.push(Buffer.from(bytes.subarray(start, p))));
          start = p;
        }
        out.push(...decoder.finish());
        expect(out).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("drops a byte order mark at the start of the stream only", () => {
    const decoder = new SseByteDecoder();
    const bom = [0xef, 0xbb, 0xbf];
    expect(decoder.push(Uint8Array.from(bom.slice(0, 2)))).toEqual([]);
    expect(decoder.push(Uint8Array.from([bom[2] as number, ...new TextEncoder().encode("data: a\n\n")]))).toEqual([
      "a",
    ]);
    expect(decoder.push(Uint8Array.from([...new TextEncoder().encode("data: "), ...bom, 0x62, 0x0a, 0x0a]))).toEqual([
      "\ufeffb",
    ]);
  });

  it("tells a chunk that ends on a whole character from one cut inside a character", () => {
    const bytes = (...b: number[]) => Uint8Array.from(b);
    expect(endsWholeUtf8(bytes(0x61))).toBe(true);
    expect(endsWholeUtf8(bytes(0x61, 0xc3, 0xa9))).toBe(true);
    expect(endsWholeUtf8(bytes(0x61, 0xc3))).toBe(false);
    expect(endsWholeUtf8(bytes(0xe2, 0x9c))).toBe(false);
    expect(endsWholeUtf8(bytes(0xf0, 0x9f, 0x98, 0x80))).toBe(true);
    expect(endsWholeUtf8(bytes(0xf0, 0x9f, 0x98))).toBe(false);
    // Continuation bytes alone: their start may be held by the decoder.
    expect(endsWholeUtf8(bytes(0x9c))).toBe(false);
    // A byte that starts no sequence (0xff, 0xc0) is a whole (malformed) character.
    expect(endsWholeUtf8(bytes(0x61, 0xff))).toBe(true);
    expect(endsWholeUtf8(bytes(0xc0))).toBe(true);
  });
});
