import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { findImageModel } from "../../core/images/catalog.js";
import { UpstreamError } from "../../core/upstream-error.js";
import { generateGeminiImages } from "./image.js";
import { decodeBase64InPlace, parseWithRawStrings, RAW_STRING_BYTES, RawJsonString } from "./image-answer.js";

/** The parsed value with every raw string turned back into its text. */
function asParsed(value: unknown): unknown {
  if (value instanceof RawJsonString) return value.text();
  if (Array.isArray(value)) return value.map(asParsed);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asParsed(v)]));
  }
  return value;
}

const long = (n: number, fill = "A") => fill.repeat(n);

describe("parseWithRawStrings", () => {
  const cases: Record<string, string> = {
    "a long value among short ones": JSON.stringify({
      a: [1, "x", { b: long(RAW_STRING_BYTES) }],
      é: 'ü\n"',
      c: null,
    }),
    "two long values, spaces around them": `{ "p" : [ "${long(RAW_STRING_BYTES + 3, "b")}" , "${long(RAW_STRING_BYTES, "c")}" ] , "q": true }`,
    "a long value with escapes": JSON.stringify({ a: `${long(RAW_STRING_BYTES)}\\"/\n\u00e9` }),
    "a long key": JSON.stringify({ [long(RAW_STRING_BYTES, "k")]: 1, [`${long(RAW_STRING_BYTES, "z")}`]: "v" }),
    "escapes before and after": JSON.stringify({ x: 'a\\"b\\\\', y: long(RAW_STRING_BYTES + 1, "y"), z: '"\\' }),
    "a long value of non-ASCII text": JSON.stringify({ a: long(RAW_STRING_BYTES, "ж") }),
    "just under the limit": JSON.stringify({ a: long(RAW_STRING_BYTES - 1) }),
    "a top-level long string": JSON.stringify(long(RAW_STRING_BYTES)),
    "text with an escaped NUL": JSON.stringify({ a: "\u0000", b: long(RAW_STRING_BYTES) }),
    "integer keys, which objects reorder": JSON.stringify({
      2: long(RAW_STRING_BYTES, "2"),
      1: long(RAW_STRING_BYTES, "1"),
    }),
  };
  for (const [name, text] of Object.entries(cases)) {
    it(`gives what JSON.parse gives: ${name}`, () => {
      expect(asParsed(parseWithRawStrings(Buffer.from(text)))).toEqual(JSON.parse(text));
    });
  }

  it("leaves long values without escapes as raw strings over the bytes, and parses the rest", () => {
    const data = long(RAW_STRING_BYTES, "Q");
    const bytes = Buffer.from(JSON.stringify({ parts: [{ inlineData: { data }, text: "hi" }] }));
    const parsed = parseWithRawStrings(bytes) as any;
    const raw = parsed.parts[0].inlineData.data;
    expect(raw).toBeInstanceOf(RawJsonString);
    expect(raw.bytes.buffer).toBe(bytes.buffer);
    expect(raw.text()).toBe(data);
    expect(parsed.parts[0].text).toBe("hi");
  });

  it("parses a long value with an escape, a long key and text holding \\u0000 as strings", () => {
    const escaped = parseWithRawStrings(Buffer.from(JSON.stringify({ a: `${long(RAW_STRING_BYTES)}"` }))) as any;
    expect(typeof escaped.a).toBe("string");
    const key = parseWithRawStrings(Buffer.from(JSON.stringify({ [long(RAW_STRING_BYTES)]: 1 }))) as any;
    expect(Object.keys(key)).toEqual([long(RAW_STRING_BYTES)]);
    const nul = parseWithRawStrings(Buffer.from(JSON.stringify({ a: "\u0000", b: long(RAW_STRING_BYTES) }))) as any;
    expect(typeof nul.b).toBe("string");
  });

  it("throws on malformed text, as JSON.parse does", () => {
    const bad = [
      `{"a": "${long(RAW_STRING_BYTES)}" "b": 1}`,
      `{"a": "${long(RAW_STRING_BYTES)}`,
      `{"a": "${long(RAW_STRING_BYTES)}"`,
      `{"a": "${long(RAW_STRING_BYTES)}", }`,
      "{",
      "",
    ];
    for (const text of bad) expect(() => parseWithRawStrings(Buffer.from(text)), text.slice(0, 20)).toThrow();
  });
});

describe("decodeBase64InPlace", () => {
  const decodes = (text: string) => {
    const expected = Buffer.from(Buffer.from(text, "latin1").toString("latin1"), "base64");
    const bytes = Buffer.from(text, "latin1");
    const decoded = decodeBase64InPlace(bytes);
    expect(decoded.buffer).toBe(bytes.buffer);
    expect(decoded.equals(expected)).toBe(true);
  };

  it("decodes base64 of any length, padded or not, as Buffer.from does", () => {
    for (const size of [0, 1, 2, 3, 100, 24 * 1024 - 1, 24 * 1024, 24 * 1024 + 1, 48 * 1024, 300_001]) {
      const b64 = randomBytes(size).toString("base64");
      decodes(b64);
      decodes(b64.replace(/=+$/, ""));
    }
  });

  it("decodes URL-safe base64 and skips what is not base64, wherever it is, as Buffer.from does", () => {
    const b64 = randomBytes(200_000).toString("base64");
    decodes(b64.replace(/\+/g, "-").replace(/\//g, "_"));
    for (const at of [0, 5, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 100_000, b64.length - 2]) {
      for (const junk of ["\n", " ", "=", "==", "!", "\u00e9", "\u00ff\u00fe"]) {
        decodes(b64.slice(0, at) + junk + b64.slice(at));
      }
    }
  });
});

/** A local upstream answering every request with `body`, status `status`. */
async function upstream(body: Buffer | string, status = 200) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: { baseUrl: `http://127.0.0.1:${port}`, key: "k", settings: {} },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const call = {
  upstreamModel: "image-model",
  catalog: findImageModel("image-model")!,
  prompt: "p",
  images: [],
  aspectRatio: null,
  n: 1,
};
const png = (size: number) => Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(size)]);

describe("generateGeminiImages with a large image", () => {
  it("gives the answer's last non-thought image, byte for byte", async () => {
    const draft = png(200_000);
    const image = png(1_500_000);
    const answer = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "here", thoughtSignature: long(70_000, "s") },
              { inlineData: { mimeType: "image/png", data: draft.toString("base64") }, thought: true },
              { inline_data: { mime_type: "image/png", data: image.toString("base64") } },
            ],
          },
          finishReason: "STOP",
        },
      ],
    };
    const up = await upstream(JSON.stringify(answer));
    try {
      const [got, ...more] = await generateGeminiImages(up.endpoint, call);
      expect(more).toHaveLength(0);
      expect(got?.mimeType).toBe("image/png");
      expect(got?.bytes.equals(image)).toBe(true);
    } finally {
      await up.close();
    }
  });

  it("fails as malformed JSON when the answer is cut after the image", async () => {
    const image = png(100_000).toString("base64");
    const up = await upstream(`{"candidates":[{"content":{"parts":[{"inlineData":{"data":"${image}"}}]}}`);
    try {
      const failure = await generateGeminiImages(up.endpoint, call).catch((err) => err);
      expect(failure).toBeInstanceOf(UpstreamError);
      expect((failure as UpstreamError).message).toMatch(/malformed JSON/);
    } finally {
      await up.close();
    }
  });
});
