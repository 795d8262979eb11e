import { GatewayError } from "../core/errors.js";
import { sniffMediaType } from "../core/tasks/media-sniff.js";
import type { BroughtInFile, FileIntakePort } from "../core/tasks/ports.js";
import { GuardedFetchError, type GuardedFetcher } from "./guarded-fetch.js";

/** The audio types an UPLOAD may bring in, with the name the gateway stores each under. */
const UPLOAD_TYPES: Readonly<Record<string, string>> = {
  "audio/mpeg": "audio/mpeg",
  "audio/mp3": "audio/mpeg",
  "audio/wav": "audio/wav",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/ogg": "audio/ogg",
  "audio/flac": "audio/flac",
  "audio/x-flac": "audio/flac",
  "audio/mp4": "audio/mp4",
  "audio/x-m4a": "audio/mp4",
  "audio/aac": "audio/aac",
};

/** The audio types accepted, as the documentation lists them. */
export const UPLOAD_CONTENT_TYPES = Object.keys(UPLOAD_TYPES);

export interface UploadIntakeParts {
  /** Fetches client-given URLs: private addresses refused unless the operator allows them. */
  fetcher: GuardedFetcher;
  maxBytes: number;
  timeoutMs: number;
  /**
   * Stores the bytes; answers the gateway's URL of the stored copy, served by `family`, and how to
   * remove it again.
   */
  store(bytes: Buffer, contentType: string, family: string): Promise<{ url: string; discard(): Promise<void> }>;
}

function refused(field: string, why: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${why}`, { param: field });
}

function fetchFailure(field: string, err: unknown, maxBytes: number): GatewayError {
  if (!(err instanceof GuardedFetchError)) return refused(field, "could not be fetched");
  if (err.reason === "too_large") return refused(field, `is larger than the upload limit of ${maxBytes} bytes`);
  if (err.reason === "blocked") return refused(field, `points to an address the gateway may not fetch: ${err.message}`);
  if (err.reason === "busy") {
    return new GatewayError("GW_ERR_BUSY", `body.${field} was not fetched: the gateway is busy; retry shortly.`, {
      param: field,
      headers: { "retry-after": "5" },
    });
  }
  return refused(field, `could not be fetched: ${err.message}`);
}

/**
 * UPLOAD's file intake: the client's URL fetched through the SSRF guard (every redirect checked,
 * the body capped at `maxBytes`), a 2xx answer of an accepted audio type whose bytes are audio
 * (MP3, AAC, WAV, Ogg, FLAC, MP4), stored by `store` as the type the bytes are.
 * Anything else is a 400 naming the field, and nothing is stored. The submit calls it only once
 * the task's hold is taken, and refunds the hold when it refuses.
 */
export function uploadIntake(parts: UploadIntakeParts): FileIntakePort {
  return {
    timeoutMs: parts.timeoutMs,
    async bringIn(url: string, field: string, family: string): Promise<BroughtInFile> {
      let res: Awaited<ReturnType<GuardedFetcher["fetch"]>>;
      try {
        res = await parts.fetcher.fetch(url, {
          method: "GET",
          headers: { accept: "audio/*" },
          maxBytes: parts.maxBytes,
          timeoutMs: parts.timeoutMs,
        });
      } catch (err) {
        throw fetchFailure(field, err, parts.maxBytes);
      }
      if (res.status < 200 || res.status >= 300) throw refused(field, `answered HTTP ${res.status}`);
      const header = String(res.headers["content-type"] ?? "")
        .split(";")[0]
        ?.trim()
        .toLowerCase();
      const contentType = header ? UPLOAD_TYPES[header] : undefined;
      if (!contentType) {
        throw refused(
          field,
          `answered content type "${header || "none"}", not an accepted audio type (${UPLOAD_CONTENT_TYPES.join(", ")})`,
        );
      }
      if (res.body.length === 0) throw refused(field, "answered an empty file");
      // What the server declares is not trusted on its own: the bytes must be audio too, and are
      // stored as what they are.
      const sniffed = sniffMediaType(res.body.subarray(0, 16), "audio_url");
      if (!sniffed) throw refused(field, `answered bytes that are not an audio file (declared ${header})`);
      const stored = await parts.store(res.body, sniffed, family);
      return { url: stored.url, contentType: sniffed, bytes: res.body.length, discard: stored.discard };
    },
  };
}
