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
});
