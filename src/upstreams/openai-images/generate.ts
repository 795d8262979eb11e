import { sniffImageType } from "../../core/images/image-type.js";
import type { GeneratedImage, ResultDownloader, UpstreamImageCall } from "../../core/images/image-upstream.js";
import { ImageNotReturnedError } from "../../core/images/no-image-error.js";
import { isUpstreamError, UpstreamError } from "../../core/upstream-error.js";
import { IMAGE_CALL_TIMEOUT_MS } from "../gemini/image.js";
import { callUpstream, readJson, safeUrl, type UpstreamEndpoint } from "../http.js";

/**
 * The request body. Beyond OpenAI's fields it carries `aspect_ratio` (only when the client gave
 * one) and `image` (input images as data URLs, already fetched and checked by the gateway), so an
 * upstream that is itself a gateway of this kind gets the whole request.
 */
export function openAiImagesBody(call: UpstreamImageCall) {
  return {
    model: call.upstreamModel,
    prompt: call.prompt,
    n: call.n,
    response_format: "b64_json",
    ...(call.aspectRatio !== null ? { aspect_ratio: call.aspectRatio } : {}),
    ...(call.images.length > 0
      ? { image: call.images.map((img) => `data:${img.mimeType};base64,${img.bytes.toString("base64")}`) }
      : {}),
  };
}

/**
 * Generates images on an `openai-images` channel: one call asking for `n` images. Answers may hold
 * `b64_json` or `url` entries; URLs are downloaded (through the SSRF guard unless they are on the
 * channel's own host). An answer with no usable image is an ImageNotReturnedError.
 */
export async function generateOpenAiImages(
  endpoint: UpstreamEndpoint,
  call: UpstreamImageCall,
  download: ResultDownloader,
): Promise<GeneratedImage[]> {
  const url = `${endpoint.baseUrl}/v1/images/generations`;
  const timeout = endpoint.settings.timeoutMs ?? IMAGE_CALL_TIMEOUT_MS;
  const res = await callUpstream({
    method: "POST",
    url,
    headers: { authorization: `Bearer ${endpoint.key}` },
    json: openAiImagesBody(call),
    timeoutMs: timeout,
    connectTimeoutMs: endpoint.settings.connectTimeoutMs,
    firstByteTimeoutMs: endpoint.settings.firstByteTimeoutMs ?? timeout,
  });
  const answer = (await readJson(res, url, { secret: endpoint.key })) as { data?: unknown } | null;
  const entries: any[] = Array.isArray(answer?.data) ? answer.data : [];
  const ownOrigin = new URL(endpoint.baseUrl).origin;
  const images: GeneratedImage[] = [];
  for (const entry of entries.slice(0, call.n)) {
    if (typeof entry?.b64_json === "string" && entry.b64_json !== "") {
      const bytes = Buffer.from(entry.b64_json, "base64");
      const mimeType = sniffImageType(bytes);
      if (!mimeType)
        throw new UpstreamError("retryable", `upstream image is not a PNG, JPEG or WebP (${safeUrl(url)})`);
      images.push({ mimeType, bytes });
    } else if (typeof entry?.url === "string" && entry.url !== "") {
      let trusted = false;
      try {
        trusted = new URL(entry.url).origin === ownOrigin;
      } catch {
        throw new UpstreamError("retryable", `upstream answered an invalid image URL (${safeUrl(url)})`);
      }
      try {
        images.push(await download(entry.url, { trusted }));
      } catch (err) {
        if (isUpstreamError(err)) throw err;
        throw new UpstreamError("retryable", `could not download the upstream image: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
  }
  if (images.length === 0) {
    throw new ImageNotReturnedError(false, "empty data", "upstream answer held no image");
  }
  return images;
}
