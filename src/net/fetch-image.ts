import { ACCEPTED_IMAGE_MIMES, type ImageMime, sniffImageType } from "../core/images/image-type.js";
import type { GuardedFetcher } from "./guarded-fetch.js";

export interface FetchedImage {
  mimeType: ImageMime;
  bytes: Buffer;
}

/**
 * Downloads one image through the guard: a 2xx answer whose content type is an image and whose
 * bytes really are a PNG, JPEG or WebP image. Anything else is a GuardedFetchError or an
 * `ImageFetchError` with a message fit for the client.
 */
export async function fetchImage(
  fetcher: GuardedFetcher,
  url: string,
  limits: { maxBytes: number; timeoutMs: number; signal?: AbortSignal; onBytes?: (bytes: number) => void },
): Promise<FetchedImage> {
  const res = await fetcher.fetch(url, {
    method: "GET",
    headers: { accept: ACCEPTED_IMAGE_MIMES.join(", ") },
    maxBytes: limits.maxBytes,
    timeoutMs: limits.timeoutMs,
    signal: limits.signal,
    onBytes: limits.onBytes,
  });
  if (res.status < 200 || res.status >= 300) {
    throw new ImageFetchError(`answered HTTP ${res.status}`);
  }
  const contentType = String(res.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  if (!contentType?.startsWith("image/")) {
    throw new ImageFetchError(`answered content type "${contentType || "none"}", not an image`);
  }
  const mimeType = sniffImageType(res.body);
  if (!mimeType) throw new ImageFetchError("answered bytes that are not a PNG, JPEG or WebP image");
  return { mimeType, bytes: res.body };
}

/** The URL answered, but not with a usable image. */
export class ImageFetchError extends Error {
  override readonly name = "ImageFetchError";
}
