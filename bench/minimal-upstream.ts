/**
 * The cheapest upstream a relay can have: a plain node:http server that answers every request
 * with a fixed body built once at start-up, never parsing what it is sent. With it the upstream
 * costs far less CPU than the relay in front of it, so a run shows the relay's own cost instead
 * of the simulator's (which, on a 2-core machine, sets most of the pace).
 *
 * Routes, chosen from the URL alone (the request body is read to its end and dropped):
 *   POST .../models/{model}:generateContent        a fixed Gemini answer (an image for a model
 *                                                  whose name has "image" in it: a 1024x1024 PNG
 *                                                  of 1.1 MB, as big as a real 1K image, inline as
 *                                                  1.5 MB of base64; BENCH_IMAGE=solid sends a
 *                                                  one-colour PNG of a few hundred bytes instead)
 *   POST .../models/{model}:streamGenerateContent  a fixed SSE stream of three Gemini chunks; for
 *                                                  a model whose name has "paced" in it, two chunks
 *                                                  200 ms apart (for the time to first event)
 *   POST .../chat/completions                      an OpenAI chat completion; with `"stream":true`
 *                                                  in the body's bytes, a fixed SSE stream of chunks,
 *                                                  a usage chunk and `data: [DONE]`
 * Every answer reports usage, so a gateway in front can settle as it would on a real upstream.
 *
 * Run as a process: node --import tsx bench/minimal-upstream.ts (it tells its parent its URL).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";
import { solidPng } from "../src/simulator/gemini-image.js";
import { announceReady, stopOnSignal } from "./child-process-ipc.js";

/** Delay between the two chunks of a paced stream, as the simulator's `[slow]` marker. */
export const PACED_DELAY_MS = 200;

const TEXTS = ["The harbor wakes ", "in a wash of pale gold, ", "gulls stitching the mist to the masts."];
const geminiUsage = (output: number) => ({
  promptTokenCount: 9,
  candidatesTokenCount: output,
  totalTokenCount: 9 + output,
});

function geminiChunk(text: string, last: boolean, output: number) {
  return {
    candidates: [
      { content: { parts: [{ text }], role: "model" }, index: 0, ...(last ? { finishReason: "STOP" } : {}) },
    ],
    usageMetadata: geminiUsage(output),
    modelVersion: "minimal-upstream",
    responseId: "minimal-upstream",
  };
}

const sse = (events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join("");

const GEMINI_ANSWER = Buffer.from(JSON.stringify(geminiChunk(TEXTS.join(""), true, 24)));
const GEMINI_STREAM = Buffer.from(sse(TEXTS.map((text, i) => geminiChunk(text, i === TEXTS.length - 1, 8 * (i + 1)))));
const PACED_FIRST = Buffer.from(sse([geminiChunk(TEXTS[0] as string, false, 8)]));
const PACED_LAST = Buffer.from(sse([geminiChunk(TEXTS[1] as string, true, 16)]));
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A valid 1024x1024 RGB PNG about as big as a generated 1K image (1.1 MB): gradients with one bit
 * of noise in two channels, which deflate cannot squeeze further. The same bytes at every start.
 * A solid colour would deflate to a few hundred bytes and hide what decoding, copying and writing
 * a real image cost.
 */
export function realisticPng(width = 1024, height = 1024): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const rowBytes = 1 + width * 3;
  const raw = Buffer.alloc(rowBytes * height);
  let state = 0x2545f491;
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes; // filter byte 0: none
    for (let x = 0; x < width; x++) {
      // xorshift32: fixed noise
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      const at = row + 1 + x * 3;
      raw[at] = ((x >> 2) + (state & 1)) & 0xff;
      raw[at + 1] = ((y >> 2) + ((state >>> 8) & 1)) & 0xff;
      raw[at + 2] = (160 + (x >> 5)) & 0xff;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", zlib.deflateSync(raw, { level: 6 })),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

const IMAGE_PNG = process.env.BENCH_IMAGE === "solid" ? solidPng(1024, 1024) : realisticPng();
const IMAGE_ANSWER = Buffer.from(
  JSON.stringify({
    candidates: [
      {
        content: {
          role: "model",
          parts: [{ inlineData: { mimeType: "image/png", data: IMAGE_PNG.toString("base64") } }],
        },
        finishReason: "STOP",
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1290, totalTokenCount: 1300 },
    modelVersion: "minimal-upstream",
  }),
);

const chatUsage = { prompt_tokens: 9, completion_tokens: 24, total_tokens: 33 };
const chatHead = { id: "chatcmpl-minimal", created: 1_700_000_000, model: "minimal-upstream" };
const CHAT_ANSWER = Buffer.from(
  JSON.stringify({
    ...chatHead,
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: TEXTS.join("") }, finish_reason: "stop" }],
    usage: chatUsage,
  }),
);
const chatChunk = (choices: unknown[], extra: object = {}) => ({
  ...chatHead,
  object: "chat.completion.chunk",
  choices,
  ...extra,
});
const CHAT_STREAM = Buffer.from(
  `${sse([
    chatChunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    ...TEXTS.map((content) => chatChunk([{ index: 0, delta: { content }, finish_reason: null }])),
    chatChunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chatChunk([], { usage: chatUsage }),
  ])}data: [DONE]\r\n\r\n`,
);
const NOT_FOUND = Buffer.from(JSON.stringify({ error: { code: 404, message: "no such route", status: "NOT_FOUND" } }));
const STREAM_MARK = Buffer.from('"stream":true');

type Fixed = { status: number; type: string; body: Buffer };
const json = (body: Buffer, status = 200): Fixed => ({ status, type: "application/json", body });
const events = (body: Buffer): Fixed => ({ status: 200, type: "text/event-stream", body });

/** The fixed answer to a request, from its method, path and (for chat) one byte search; "paced" for a paced stream. */
function fixedAnswer(method: string | undefined, url: string, body: Buffer): Fixed | "paced" {
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  if (method !== "POST") return json(NOT_FOUND, 404);
  if (path.endsWith("/chat/completions")) return body.includes(STREAM_MARK) ? events(CHAT_STREAM) : json(CHAT_ANSWER);
  if (path.endsWith(":generateContent")) return json(path.includes("image") ? IMAGE_ANSWER : GEMINI_ANSWER);
  if (path.endsWith(":streamGenerateContent")) return path.includes("paced") ? "paced" : events(GEMINI_STREAM);
  return json(NOT_FOUND, 404);
}

function respond(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
  const fixed = fixedAnswer(req.method, req.url ?? "", body);
  if (fixed !== "paced") {
    res.writeHead(fixed.status, { "content-type": fixed.type, "content-length": fixed.body.length });
    res.end(fixed.body);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(PACED_FIRST);
  const timer = setTimeout(() => res.end(PACED_LAST), PACED_DELAY_MS);
  res.once("close", () => clearTimeout(timer));
}

export interface MinimalUpstream {
  url: string;
  /** Requests answered since start. */
  handled(): number;
  close(): Promise<void>;
}

/** Starts the minimal upstream on 127.0.0.1 (a free port unless given). */
export async function startMinimalUpstream(port = 0): Promise<MinimalUpstream> {
  let handled = 0;
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      handled += 1;
      respond(req, res, parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    handled: () => handled,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const upstream = await startMinimalUpstream();
  process.on("message", (message: unknown) => {
    if ((message as { kind?: string })?.kind === "count")
      process.send?.({ kind: "count", handled: upstream.handled() });
  });
  stopOnSignal(() => upstream.close());
  announceReady({ url: upstream.url });
}
