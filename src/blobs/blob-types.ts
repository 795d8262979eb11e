/** The media types the blob store keeps, each with the file extension its key carries. */
const EXTENSION_OF: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/ogg": "ogg",
  "audio/flac": "flac",
  "audio/mp4": "m4a",
  "audio/aac": "aac",
  "video/mp4": "mp4",
};

const TYPE_OF: Record<string, string> = Object.fromEntries(Object.entries(EXTENSION_OF).map(([t, e]) => [e, t]));

/** Other names of the same types, as servers send them. */
const ALIASES: Record<string, string> = {
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/vnd.wave": "audio/wav",
  "audio/mp3": "audio/mpeg",
  "audio/x-flac": "audio/flac",
  "audio/x-m4a": "audio/mp4",
  "image/jpg": "image/jpeg",
};

/** 40 base62 characters (about 238 bits) and a known extension: a key nobody can guess or enumerate. */
export const BLOB_KEY = new RegExp(`^([A-Za-z0-9]{40})\\.(${Object.values(EXTENSION_OF).join("|")})$`);

/** The stored extension of a media type, or undefined when the store does not keep that type. */
export function extensionOf(mimeType: string): string | undefined {
  return EXTENSION_OF[mimeType];
}

/** The media type of a stored extension. */
export function mimeTypeOf(extension: string): string {
  return TYPE_OF[extension] ?? "application/octet-stream";
}

/** A `Content-Type` value reduced to the store's name of it (`audio/x-wav` -> `audio/wav`), or "". */
export function canonicalMimeType(header: string | undefined): string {
  const bare = (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return ALIASES[bare] ?? bare;
}
