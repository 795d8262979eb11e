/**
 * Reading a Gemini image answer without turning its image into JavaScript strings. The answer is
 * JSON holding the image as one long base64 string (1.5 MB for a 1K PNG, 4x that for 4K). Read the
 * plain way (the bytes joined, decoded into a text, parsed, the base64 string decoded) it makes
 * four fresh copies of that size; here it makes one, the joined bytes: the long strings are found
 * by a scan of the bytes and left there, the rest of the answer is parsed as usual, and an image is
 * decoded in place, over its own base64 text.
 */
import type { Dispatcher } from "undici";
import { UpstreamError } from "../../core/upstream-error.js";
import { bodyChunks, networkError, safeUrl } from "../http.js";

/** Strings at least this long (in bytes) are left in the answer's bytes instead of parsed. */
export const RAW_STRING_BYTES = 64 * 1024;

/**
 * A string of a JSON answer left as its bytes (between its quotes; it held no escape). `text()`
 * gives it as the parser would have.
 */
export class RawJsonString {
  constructor(readonly bytes: Buffer) {}

  text(): string {
    return this.bytes.toString("utf8");
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** A parsed string that stands for the raw string of that index: only `\u0000` in the text can make a NUL. */
const MARK = "\u0000";
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** A value with every mark string replaced by its raw string. */
function restore(value: unknown, raw: RawJsonString[]): unknown {
  if (typeof value === "string") {
    return value.startsWith(MARK) ? (raw[Number(value.slice(1))] ?? value) : value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restore(value[i], raw);
    return value;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = restore(record[key], raw);
  }
  return value;
}

/**
 * Parses JSON text given as bytes, leaving every string value of `RAW_STRING_BYTES` or more that
 * holds no escape as a `RawJsonString` over those bytes (no copy). Everything else parses as
 * `JSON.parse` would, and malformed text throws as it does; the bytes of a raw string are not
 * checked for control characters, which `JSON.parse` refuses. Text that holds `\u0000` is parsed
 * whole (the marks it uses could not be told from the text's own).
 */
export function parseWithRawStrings(bytes: Buffer): unknown {
  const raw: RawJsonString[] = [];
  let text = "";
  let copied = 0;
  let backslash = bytes.indexOf(BACKSLASH);
  if (backslash < 0) backslash = bytes.length;
  let at = bytes.indexOf(QUOTE);
  while (at >= 0) {
    // `at` opens a string: outside strings a quote can only do that. Find its closing quote.
    let end = bytes.indexOf(QUOTE, at + 1);
    let escaped = false;
    while (end >= 0 && backslash < end) {
      escaped = true;
      // A backslash escapes the character after it (`\uXXXX` goes on with hex digits only).
      const next = backslash + 2;
      if (next > end) end = bytes.indexOf(QUOTE, next);
      backslash = bytes.indexOf(BACKSLASH, next);
      if (backslash < 0) backslash = bytes.length;
    }
    if (end < 0) break; // unterminated: JSON.parse reports it below
    if (!escaped && end - at - 1 >= RAW_STRING_BYTES) {
      let after = end + 1;
      while (isSpace(bytes[after])) after++;
      // A key stays a key: only values are left raw.
      if (bytes[after] !== COLON) {
        const before = bytes.toString("utf8", copied, at + 1);
        if (before.includes("\\u0000")) return JSON.parse(bytes.toString("utf8"));
        text += `${before}\\u0000${raw.length}`;
        raw.push(new RawJsonString(bytes.subarray(at + 1, end)));
        copied = end;
      }
    }
    at = bytes.indexOf(QUOTE, end + 1);
  }
  if (raw.length === 0) return JSON.parse(bytes.toString("utf8"));
  const last = bytes.toString("utf8", copied);
  if (last.includes("\\u0000")) return JSON.parse(bytes.toString("utf8"));
  return restore(JSON.parse(text + last), raw);
}

/** Base64 characters decoded at a time: a multiple of 4, small enough for a short-lived string. */
const PIECE_CHARS = 32 * 1024;

/**
 * Decodes base64 text in place: the bytes it answers are the start of `text`'s own memory, whose
 * base64 is gone afterwards. The result is what `Buffer.from(text.toString("latin1"), "base64")`
 * gives (characters outside the alphabet skipped, padding optional). Decoded bytes never take
 * more room than their text, so writing behind the text being read overwrites only what was read.
 */
export function decodeBase64InPlace(text: Buffer): Buffer {
  const whole = (PIECE_CHARS / 4) * 3;
  let read = 0;
  let written = 0;
  while (text.length - read > PIECE_CHARS) {
    const piece = text.toString("latin1", read, read + PIECE_CHARS);
    const n = text.write(piece, written, "base64");
    read += PIECE_CHARS;
    if (n !== whole) {
      // A character outside the alphabet (or padding) in this piece: the groups of four may not
      // line up with the pieces any more, so what is left is decoded in one go.
      const rest = Buffer.from(piece + text.toString("latin1", read), "base64");
      return text.subarray(0, written + rest.copy(text, written));
    }
    written += n;
  }
  const last = text.toString("latin1", read);
  return text.subarray(0, written + text.write(last, written, "base64"));
}

/**
 * Reads a 2xx JSON answer of at most `maxBytes` into one buffer and parses it with its long
 * strings left raw (`parseWithRawStrings`). Network failures, an answer too large and malformed
 * JSON become UpstreamErrors, as `readJson` makes them.
 */
export async function readAnswerWithRawStrings(
  res: Dispatcher.ResponseData,
  url: string,
  maxBytes = 64 * 1024 * 1024,
): Promise<unknown> {
  let bytes: Buffer;
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of bodyChunks(res.body)) {
      size += chunk.length;
      if (size > maxBytes) {
        res.body.destroy();
        throw new UpstreamError("retryable", `upstream answer larger than ${maxBytes} bytes (${safeUrl(url)})`);
      }
      chunks.push(chunk);
    }
    // A copy even of one chunk: an image is decoded in place, in memory of its own.
    bytes = Buffer.concat(chunks, size);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw networkError(err, url);
  }
  if (bytes.length === 0) return null;
  try {
    return parseWithRawStrings(bytes);
  } catch {
    throw new UpstreamError("retryable", `upstream answered malformed JSON (${safeUrl(url)})`, {
      status: res.statusCode,
    });
  }
}
