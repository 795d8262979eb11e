import { sniffImageType } from "../../core/images/image-type.js";
import type { GeneratedImage, UpstreamImageCall } from "../../core/images/image-upstream.js";
import { ImageNotReturnedError } from "../../core/images/no-image-error.js";
import { callUpstream, type UpstreamEndpoint } from "../http.js";
import { geminiError } from "./errors.js";
import { decodeBase64InPlace, RawJsonString, readAnswerWithRawStrings } from "./image-answer.js";

/** Image generation takes long before the first byte: 4K images can need minutes. */
export const IMAGE_CALL_TIMEOUT_MS = 300_000;

/** finishReason words that mean the image was withheld for safety or policy reasons. */
const BLOCKED_FINISH = new Set([
  "SAFETY",
  "IMAGE_SAFETY",
  "PROHIBITED_CONTENT",
  "IMAGE_PROHIBITED_CONTENT",
  "BLOCKLIST",
  "SPII",
  "RECITATION",
  "IMAGE_RECITATION",
]);

/** The generateContent body for one image. */
export function geminiImageBody(call: UpstreamImageCall) {
  const imageConfig: Record<string, string> = {};
  if (call.aspectRatio !== null) imageConfig.aspectRatio = call.aspectRatio;
  if (call.catalog.imageSize !== null) imageConfig.imageSize = call.catalog.imageSize;
  return {
    contents: [
      {
        role: "user",
        parts: [
          { text: call.prompt },
          ...call.images.map((img) => ({ inlineData: { mimeType: img.mimeType, data: img.bytes.toString("base64") } })),
        ],
      },
    ],
    generationConfig: {
      responseModalities: ["TEXT", "IMAGE"],
      ...(Object.keys(imageConfig).length > 0 ? { imageConfig } : {}),
    },
  };
}

/** The bytes of an inline part's base64 `data`; a raw string is decoded over its own text. */
function inlineBytes(data: unknown): Buffer | null {
  if (typeof data === "string") return Buffer.from(data, "base64");
  return data instanceof RawJsonString ? decodeBase64InPlace(data.bytes) : null;
}

/**
 * The image of a generateContent answer: the last non-thought inline image part of the first
 * candidate (models that think may send draft images flagged `thought` first). No image part is
 * an ImageNotReturnedError, `blocked` when the prompt or the candidate was stopped for safety.
 * An inline `data` may be a string or a raw string of the answer's bytes (`readAnswerWithRawStrings`),
 * which is decoded in place: the answer is read once.
 */
export function imageFromAnswer(answer: any): GeneratedImage {
  const blockReason = answer?.promptFeedback?.blockReason;
  if (typeof blockReason === "string" && blockReason !== "") {
    throw new ImageNotReturnedError(true, blockReason, `prompt blocked by the upstream (${blockReason})`);
  }
  const candidate = Array.isArray(answer?.candidates) ? answer.candidates[0] : undefined;
  const finish = typeof candidate?.finishReason === "string" ? candidate.finishReason : "no candidate";
  const parts: any[] = Array.isArray(candidate?.content?.parts) ? candidate.content.parts : [];
  let found: GeneratedImage | null = null;
  for (const part of parts) {
    const inline = part?.inlineData ?? part?.inline_data;
    if (part?.thought === true) continue;
    const bytes = inlineBytes(inline?.data);
    if (!bytes) continue;
    const mimeType = sniffImageType(bytes);
    if (mimeType) found = { mimeType, bytes };
  }
  if (found) return found;
  if (BLOCKED_FINISH.has(finish)) {
    throw new ImageNotReturnedError(true, finish, `image withheld by the upstream (${finish})`);
  }
  throw new ImageNotReturnedError(false, finish, `upstream answer ended without an image (${finish})`);
}

async function generateOne(endpoint: UpstreamEndpoint, call: UpstreamImageCall): Promise<GeneratedImage> {
  const url = `${endpoint.baseUrl}/v1beta/models/${encodeURIComponent(call.upstreamModel)}:generateContent`;
  const timeout = endpoint.settings.timeoutMs ?? IMAGE_CALL_TIMEOUT_MS;
  const res = await callUpstream({
    method: "POST",
    url,
    headers: { "x-goog-api-key": endpoint.key },
    json: geminiImageBody(call),
    timeoutMs: timeout,
    connectTimeoutMs: endpoint.settings.connectTimeoutMs,
    firstByteTimeoutMs: endpoint.settings.firstByteTimeoutMs ?? timeout,
  });
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const text = await res.body.text().catch(() => "");
    throw geminiError(res.statusCode, text, endpoint.key);
  }
  // The image's base64 is left in the answer's bytes and decoded there: no text, parse or copy of it.
  return imageFromAnswer(await readAnswerWithRawStrings(res, url));
}

/**
 * Generates `call.n` images on a `gemini` channel. The API makes one image per call, so n calls
 * run side by side; the images that came back are returned, and when none did, the most telling
 * failure is thrown (a safety block first, then any other).
 */
export async function generateGeminiImages(
  endpoint: UpstreamEndpoint,
  call: UpstreamImageCall,
): Promise<GeneratedImage[]> {
  const outcomes = await Promise.allSettled(Array.from({ length: call.n }, () => generateOne(endpoint, call)));
  const images = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
  if (images.length > 0) return images;
  const errors = outcomes.map((o) => (o as PromiseRejectedResult).reason);
  const blocked = errors.find((e) => e instanceof ImageNotReturnedError && e.blocked);
  throw blocked ?? errors.find((e) => e instanceof ImageNotReturnedError) ?? errors[0];
}
