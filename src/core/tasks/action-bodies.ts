import { blank, invalid } from "./field-errors.js";

/** LYRICS: a lyric sheet written from a description. */
export interface LyricsBody {
  prompt: string;
}

/** EXTEND: one of the caller's clips continued from a point. */
export interface ExtendBody {
  clip_id: string;
  /** Seconds into the source clip where the continuation starts. */
  continue_at: number;
  prompt?: string;
  tags?: string;
  title?: string;
  mv?: string;
}

/** The source of COVER and the vocal/instrumental actions: a clip or an upload, exactly one. */
export interface SourceBody {
  clip_id?: string;
  upload_id?: string;
}

export interface CoverBody extends SourceBody {
  prompt?: string;
  tags?: string;
  title?: string;
  mv?: string;
  cover_strength?: number;
}

/** ADD_INSTRUMENTAL, ADD_VOCALS (with title) and VOCALS_SWAP (without). */
export interface LayerBody extends SourceBody {
  prompt?: string;
  tags?: string;
  title?: string;
}

export type StemsKind = "vocals" | "all";

export interface StemsBody {
  clip_id: string;
  kind: StemsKind;
}

/** WAV and MUSIC_VIDEO: one clip. */
export interface ClipBody {
  clip_id: string;
}

export interface UploadBody {
  url: string;
}

export type ActionBody = LyricsBody | ExtendBody | CoverBody | LayerBody | StemsBody | ClipBody | UploadBody;

/** The fields that may name a source clip: a clip of a succeeded task, or an upload's clip. */
export type SourceClipField = "clip_id" | "upload_id";

/** LYRICS: a prompt that is not blank. */
export function checkLyrics(body: LyricsBody): void {
  if (blank(body.prompt)) throw invalid("prompt", "must not be blank");
}

/** EXTEND: nothing beyond the schema (clip_id and continue_at are required there). */
export function checkExtend(_body: ExtendBody): void {}

/** COVER, ADD_INSTRUMENTAL, ADD_VOCALS, VOCALS_SWAP: exactly one of clip_id and upload_id. */
export function checkOneSource(body: SourceBody): void {
  const hasClip = body.clip_id !== undefined;
  const hasUpload = body.upload_id !== undefined;
  if (hasClip === hasUpload) {
    throw invalid(
      "clip_id",
      hasClip ? "and body.upload_id cannot both be given: name one source" : "or body.upload_id is required",
    );
  }
}

/** STEMS, WAV, MUSIC_VIDEO: nothing beyond the schema. */
export function checkNothingMore(_body: object): void {}

/** UPLOAD: an http(s) URL (where it points is checked when the file is brought in). */
export function checkUpload(body: UploadBody): void {
  let parsed: URL;
  try {
    parsed = new URL(body.url);
  } catch {
    throw invalid("url", "must be an absolute http(s) URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalid("url", "must be an http(s) URL");
  }
}

/** The source field a body names (the first of `fields` present), with its value. */
export function namedSource(
  body: object,
  fields: readonly SourceClipField[],
): { field: SourceClipField; id: string } | null {
  const b = body as Record<string, unknown>;
  for (const field of fields) {
    const id = b[field];
    if (typeof id === "string") return { field, id };
  }
  return null;
}
