import { GatewayError } from "../../core/errors.js";
import { sniffImageType } from "../../core/images/image-type.js";
import type { VideoBody } from "../../core/tasks/kinds/video-body.js";
import type { TaskAttachment, TaskIntake } from "../../core/tasks/ports.js";
import type { TaskBody } from "../../core/tasks/task-kind.js";
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

/** The reference image of a create request as given: a file of the form, or a URL to fetch. */
export type GivenReference = { kind: "file"; attachment: TaskAttachment } | { kind: "url"; url: string };

/**
 * Reads the reference image of a create request without any network access: an uploaded file
 * (checked here: a PNG, JPEG or WebP image within `maxBytes`) or `{image_url}`, an http(s) URL
 * fetched only once the video's hold is taken (`referenceIntake`). Anything else is a 400 naming
 * `input_reference`. Null when the request has none.
 */
export function givenReference(value: unknown, maxBytes: number): GivenReference | null {
  if (value === undefined || value === null || value === "") return null;
  if (isFormFile(value)) {
    if (value.size > maxBytes) throw refused(`is larger than the limit of ${maxBytes} bytes`);
    const mimeType = sniffImageType(value.bytes);
    if (!mimeType) throw refused("is not a PNG, JPEG or WebP image");
    return { kind: "file", attachment: { field: FIELD, fileName: value.file_name, mimeType, bytes: value.bytes } };
  }
  const url = typeof value === "object" ? (value as { image_url?: unknown }).image_url : undefined;
  if (typeof url !== "string" || url === "") {
    throw refused("must be an image file or an object with an image_url");
  }
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) throw refused("image_url must be an http(s) URL");
  return { kind: "url", url };
}

/** What the recorded body says of a reference image (its bytes travel beside the body). */
export function describedReference(body: VideoBody, source: "file" | "url", image: TaskAttachment): VideoBody {
  return { ...body, input_reference: { source, mime_type: image.mimeType, bytes: image.bytes.length } };
}

/**
 * The intake of a reference image given by URL, run by the submit once the video's hold is taken:
 * fetched through the SSRF guard, a PNG, JPEG or WebP image within `maxBytes`, held in memory
 * until the send (nothing is stored). A URL that cannot be used is a 400 naming `input_reference`.
 */
export function referenceIntake(url: string, limits: ReferenceLimits): TaskIntake {
  return {
    timeoutMs: limits.timeoutMs,
    async bringIn(body: TaskBody) {
      const attachment = await fetchReference(url, limits);
      const described = describedReference(body as unknown as VideoBody, "url", attachment);
      return { body: described as unknown as TaskBody, attachment, discard: async () => {} };
    },
  };
}

async function fetchReference(url: string, limits: ReferenceLimits): Promise<TaskAttachment> {
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
