import { GatewayError } from "../../core/errors.js";
import { sniffImageType } from "../../core/images/image-type.js";
import type { TaskAttachment } from "../../core/tasks/ports.js";
import { fetchImage, ImageFetchError } from "../../net/fetch-image.js";
import { GuardedFetchError, type GuardedFetcher } from "../../net/guarded-fetch.js";
import { isFormFile } from "./multipart.js";

const FIELD = "input_reference";

function refused(message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${FIELD} ${message}`, { param: FIELD });
}

export interface ReferenceLimits {
  maxBytes: number;
  timeoutMs: number;
  fetcher: GuardedFetcher;
}

/**
 * The reference image of a create request: an uploaded file, or `{image_url}` fetched through the
 * SSRF guard. Either must be a PNG, JPEG or WebP image within `maxBytes`; anything else is a 400
 * naming `input_reference`. Null when the request has none.
 */
export async function referenceImage(value: unknown, limits: ReferenceLimits): Promise<TaskAttachment | null> {
  if (value === undefined || value === null || value === "") return null;
  if (isFormFile(value)) {
    if (value.size > limits.maxBytes) throw refused(`is larger than the limit of ${limits.maxBytes} bytes`);
    const mimeType = sniffImageType(value.bytes);
    if (!mimeType) throw refused("is not a PNG, JPEG or WebP image");
    return { field: FIELD, fileName: value.file_name, mimeType, bytes: value.bytes };
  }
  const url = typeof value === "object" ? (value as { image_url?: unknown }).image_url : undefined;
  if (typeof url !== "string" || url === "") {
    throw refused("must be an image file or an object with an image_url");
  }
  try {
    const image = await fetchImage(limits.fetcher, url, { maxBytes: limits.maxBytes, timeoutMs: limits.timeoutMs });
    const ext = image.mimeType.split("/")[1] ?? "png";
    return { field: FIELD, fileName: `reference.${ext}`, mimeType: image.mimeType, bytes: image.bytes };
  } catch (err) {
    if (err instanceof GuardedFetchError && err.reason === "too_large") {
      throw refused(`is larger than the limit of ${limits.maxBytes} bytes`);
    }
    if (err instanceof GuardedFetchError || err instanceof ImageFetchError) {
      throw refused(`image_url could not be used: ${err.message}`);
    }
    throw err;
  }
}
