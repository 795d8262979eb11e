import { GatewayError } from "../errors.js";
import { type ImageMime, sniffImageType } from "./image-type.js";

/** An input image as the client gave it, before any network access. */
export type ImageReference = { kind: "url"; url: string } | { kind: "inline"; image: InputImage };

/** Image bytes ready to go upstream. */
export interface InputImage {
  mimeType: ImageMime;
  bytes: Buffer;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;
const DATA_URL_TYPES: Record<string, ImageMime> = {
  "image/png": "image/png",
  "image/jpeg": "image/jpeg",
  "image/jpg": "image/jpeg",
  "image/webp": "image/webp",
};
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const EXPECTED_FORM = "an http(s) URL or a data URL such as data:image/png;base64,iVBORw0KGgo...";

function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${message}`, { param: field });
}

/** Checks decoded image bytes: size limit and a real PNG, JPEG or WebP signature. */
export function checkImageBytes(field: string, bytes: Buffer, maxBytes: number): ImageMime {
  if (bytes.length === 0) throw invalid(field, "is an empty image");
  if (bytes.length > maxBytes) {
    throw invalid(field, `is ${bytes.length} bytes; the limit is ${maxBytes} bytes per image`);
  }
  const sniffed = sniffImageType(bytes);
  if (!sniffed) throw invalid(field, "is not a PNG, JPEG or WebP image");
  return sniffed;
}

/**
 * Reads one entry of the `image` field (`field` names it in errors, e.g. `image[2]`): an http(s)
 * URL (fetched later, through the SSRF guard) or a base64 data URL of a PNG, JPEG or WebP image,
 * decoded and checked here. Raw base64 is refused with the expected form in the message.
 */
export function parseImageReference(field: string, value: string, maxBytes: number): ImageReference {
  const text = value.trim();
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid(field, `is not a valid URL; expected ${EXPECTED_FORM}`);
    }
    if (url.hostname === "") throw invalid(field, `is not a valid URL; expected ${EXPECTED_FORM}`);
    return { kind: "url", url: url.toString() };
  }
  if (/^data:/i.test(text)) {
    const match = DATA_URL.exec(text);
    const declared = (match?.[1] ?? "").toLowerCase();
    const mime = DATA_URL_TYPES[declared];
    if (!match || !mime) {
      throw invalid(
        field,
        "must be a data URL of type image/png, image/jpeg or image/webp (data:image/png;base64,...)",
      );
    }
    const params = (match[2] ?? "").toLowerCase().split(";");
    if (!params.includes("base64")) throw invalid(field, "must be a base64 data URL (data:image/png;base64,...)");
    const payload = (match[3] ?? "").replace(/\s+/g, "");
    // Refuse before decoding: base64 is 4/3 the size of the bytes it carries.
    if (Math.floor((payload.length * 3) / 4) > maxBytes + 2) {
      throw invalid(field, `is larger than ${maxBytes} bytes; the limit is ${maxBytes} bytes per image`);
    }
    if (payload.length % 4 !== 0 || !BASE64.test(payload)) throw invalid(field, "holds invalid base64 data");
    const bytes = Buffer.from(payload, "base64");
    // The signature decides the format; a data URL that names a different image type still works.
    const mimeType = checkImageBytes(field, bytes, maxBytes);
    return { kind: "inline", image: { mimeType, bytes } };
  }
  if (text.length >= 16 && /^[A-Za-z0-9+/=\s_-]+$/.test(text)) {
    throw invalid(field, `looks like raw base64, which is not accepted; send ${EXPECTED_FORM}`);
  }
  throw invalid(field, `must be ${EXPECTED_FORM}`);
}
