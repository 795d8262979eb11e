import { createHash, randomUUID } from "node:crypto";
import zlib from "node:zlib";
import { isImageSize, pixelSize } from "../core/images/pixel-size.js";
import type { GeminiImageOutcome } from "./options.js";
import type { GeminiSimRequest } from "./state.js";

/** What the image route saw of one request; recorded as the `body` of the received request. */
export interface GeminiImageReceived {
  kind: "gemini-image";
  model: string;
  prompt: string;
  /** `generationConfig.imageConfig` exactly as sent (undefined when absent). */
  imageConfig: Record<string, unknown> | undefined;
  imageSize: string | undefined;
  aspectRatio: string | undefined;
  inlineParts: number;
  inlineMimeTypes: string[];
  responseModalities: unknown;
}

const MARKERS: Array<[string, GeminiImageOutcome]> = [
  ["[noimage]", "no-image"],
  ["[blocked]", "blocked"],
  ["[imagesafety]", "image-safety"],
  ["[error400]", "error-400"],
  ["[error500]", "error-500"],
];

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

const pngCache = new Map<string, Buffer>();

/**
 * A real PNG of one solid colour. One-bit palette rows of zeros deflate to almost nothing, so
 * even 4K images cost a few milliseconds and a few kilobytes.
 */
export function solidPng(
  width: number,
  height: number,
  rgb: readonly [number, number, number] = [90, 140, 200],
): Buffer {
  const cacheKey = `${width}x${height}:${rgb.join(",")}`;
  const hit = pngCache.get(cacheKey);
  if (hit) return hit;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 3; // colour type: palette
  const rowBytes = 1 + Math.ceil(width / 8); // filter byte + pixels
  const raw = Buffer.alloc(rowBytes * height);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("PLTE", Buffer.from(rgb)),
    chunk("IDAT", zlib.deflateSync(raw, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
  if (pngCache.size > 64) pngCache.clear();
  pngCache.set(cacheKey, png);
  return png;
}

/** A colour that depends on the prompt, so different prompts give different images. */
export function colourOf(text: string): [number, number, number] {
  const h = createHash("sha256").update(text).digest();
  return [h[0] ?? 0, h[1] ?? 0, h[2] ?? 0];
}

function googleError(sim: GeminiSimRequest, code: number, status: string, message: string) {
  return sim.reply.status(code).send({ error: { code, message, status } });
}

/** Answers a Gemini request that asks for the IMAGE modality with a real PNG of the tier's size. */
export async function answerGeminiImage(sim: GeminiSimRequest) {
  const body = sim.body ?? {};
  const parts: any[] = (Array.isArray(body.contents) ? body.contents : []).flatMap((c: any) =>
    Array.isArray(c?.parts) ? c.parts : [],
  );
  const prompt = parts
    .filter((p) => typeof p?.text === "string")
    .map((p) => p.text as string)
    .join("\n");
  const inline = parts.filter((p) => p?.inlineData && typeof p.inlineData.data === "string");
  const imageConfig = body.generationConfig?.imageConfig as Record<string, unknown> | undefined;
  const received: GeminiImageReceived = {
    kind: "gemini-image",
    model: sim.model,
    prompt,
    imageConfig,
    imageSize: imageConfig?.imageSize as string | undefined,
    aspectRatio: imageConfig?.aspectRatio as string | undefined,
    inlineParts: inline.length,
    inlineMimeTypes: inline.map((p) => String(p.inlineData.mimeType)),
    responseModalities: body.generationConfig?.responseModalities,
  };
  sim.state.record({
    protocol: "gemini",
    method: "POST",
    path: sim.request.url.split("?")[0] ?? "",
    headers: sim.request.headers,
    body: received,
  });

  if (received.imageSize !== undefined && !isImageSize(received.imageSize)) {
    return googleError(sim, 400, "INVALID_ARGUMENT", `Invalid imageSize "${String(received.imageSize)}".`);
  }
  const size = pixelSize(received.imageSize ?? null, received.aspectRatio ?? null);
  if (!size) return googleError(sim, 400, "INVALID_ARGUMENT", `Invalid aspectRatio "${String(received.aspectRatio)}".`);
  if (inline.length > 14) return googleError(sim, 400, "INVALID_ARGUMENT", "Too many input images (at most 14).");

  const options = sim.state.options.gemini?.image ?? {};
  const outcome = MARKERS.find(([marker]) => prompt.includes(marker))?.[1] ?? options.outcome ?? "image";
  if (outcome === "error-400") return googleError(sim, 400, "INVALID_ARGUMENT", "Simulated invalid request.");
  if (outcome === "error-500") return googleError(sim, 500, "INTERNAL", "Simulated internal error.");

  const responseId = randomUUID().replaceAll("-", "").slice(0, 22);
  const usageMetadata = { promptTokenCount: 10 + 258 * inline.length, candidatesTokenCount: 1290, totalTokenCount: 0 };
  usageMetadata.totalTokenCount = usageMetadata.promptTokenCount + usageMetadata.candidatesTokenCount;
  let answer: Record<string, unknown>;
  if (outcome === "blocked") {
    answer = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata, modelVersion: sim.model, responseId };
  } else if (outcome === "image-safety") {
    answer = {
      candidates: [{ content: { role: "model", parts: [] }, finishReason: "IMAGE_SAFETY", index: 0 }],
      usageMetadata,
      modelVersion: sim.model,
      responseId,
    };
  } else {
    const outParts: unknown[] = [];
    if (options.textPart !== false || outcome === "no-image") {
      outParts.push({
        text: outcome === "no-image" ? "I cannot draw that, but here is a poem instead." : "Here it is.",
      });
    }
    if (outcome === "image") {
      const png = solidPng(size.width, size.height, colourOf(prompt));
      outParts.push({ inlineData: { mimeType: "image/png", data: png.toString("base64") } });
    }
    answer = {
      candidates: [{ content: { role: "model", parts: outParts }, finishReason: "STOP", index: 0 }],
      usageMetadata,
      modelVersion: sim.model,
      responseId,
    };
  }
  if (sim.method === "streamGenerateContent") {
    if (sim.sse) {
      sim.reply.raw.writeHead(200, { "content-type": "text/event-stream" });
      sim.reply.raw.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
      return sim.reply;
    }
    return sim.reply.send([answer]);
  }
  return sim.reply.send(answer);
}
