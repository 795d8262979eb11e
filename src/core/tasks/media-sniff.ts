import type { ResultField } from "./result-files.js";

/** Bytes a sniff needs from the start of a file. */
export const SNIFF_BYTES = 16;

function ascii(head: Buffer, at: number, text: string): boolean {
  return head.length >= at + text.length && head.toString("latin1", at, at + text.length) === text;
}

/**
 * The media type of a file from its first bytes, as kept for a clip's field: audio for
 * `audio_url`, an MP4 for `video_url`, an image for `image_url` and `spritesheet_url`; undefined when the bytes are not
 * of that kind. What a server declares is not trusted on its own.
 */
export function sniffMediaType(head: Buffer, field: ResultField): string | undefined {
  const b0 = head[0] ?? 0;
  const b1 = head[1] ?? 0;
  const isMp4 = ascii(head, 4, "ftyp");
  if (field === "video_url") return isMp4 ? "video/mp4" : undefined;
  if (field === "image_url" || field === "spritesheet_url") {
    if (b0 === 0x89 && ascii(head, 1, "PNG")) return "image/png";
    if (b0 === 0xff && b1 === 0xd8 && head[2] === 0xff) return "image/jpeg";
    if (ascii(head, 0, "RIFF") && ascii(head, 8, "WEBP")) return "image/webp";
    return undefined;
  }
  if (ascii(head, 0, "ID3")) return "audio/mpeg";
  if (b0 === 0xff && (b1 & 0xf6) === 0xf0) return "audio/aac";
  if (b0 === 0xff && (b1 & 0xe0) === 0xe0) return "audio/mpeg";
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WAVE")) return "audio/wav";
  if (ascii(head, 0, "OggS")) return "audio/ogg";
  if (ascii(head, 0, "fLaC")) return "audio/flac";
  if (isMp4) return "audio/mp4";
  return undefined;
}
