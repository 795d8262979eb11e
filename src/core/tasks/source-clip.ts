import { GatewayError } from "../errors.js";
import type { SourceClipField, TaskKind } from "./task-kind.js";

/** A clip of one of the caller's succeeded tasks, as the store finds it. */
export interface OwnedClip {
  /** The model that made it. */
  model: string;
  /** The action of the task that made it (UPLOAD for an upload's clip, LYRICS for a sheet). */
  action: string;
  /** The upstream's id of the task that made it (the upstream may need it with the clip id). */
  upstreamTaskId: string | null;
  /** The clip's audio URL as the gateway hands it out; empty when it has none. */
  audioUrl: string;
}

/** The clip a task works on: which field named it, and what the store knows of it. */
export interface SourceClip extends OwnedClip {
  field: SourceClipField;
  clipId: string;
}

/** Finds a clip of the caller's succeeded tasks of a family (the task store's read). */
export type OwnedClipFinder = (platform: string, userId: number, clipId: string) => Promise<OwnedClip | undefined>;

/** The source field a body names (the first of `fields` present), with its value. */
function namedSource(body: object, fields: readonly SourceClipField[]): { field: SourceClipField; id: string } | null {
  const b = body as Record<string, unknown>;
  for (const field of fields) {
    const id = b[field];
    if (typeof id === "string") return { field, id };
  }
  return null;
}

function notYours(kind: TaskKind, field: SourceClipField, id: string, what: string): GatewayError {
  return new GatewayError("GW_ERR_NOT_FOUND", `body.${field} ${id} is not ${what} of yours in ${kind.family}.`, {
    param: field,
  });
}

/**
 * The source clip a body names, checked to be the caller's: a 404 naming the field when it is
 * not (someone else's clip, an unknown id, a clip of a task that has not succeeded), when an
 * `upload_id` is not the clip of an UPLOAD, or when the clip has no audio (a lyric sheet). Null
 * for kinds that work on no clip. Nothing is sent upstream before this holds.
 */
export async function ownedSourceClip(
  find: OwnedClipFinder,
  kind: TaskKind,
  userId: number,
  body: object,
): Promise<SourceClip | null> {
  const fields = kind.sourceClipFields;
  if (!fields || fields.length === 0) return null;
  const named = namedSource(body, fields);
  if (!named) return null;
  const clip = await find(kind.family, userId, named.id);
  if (!clip) {
    const what = named.field === "upload_id" ? "an upload" : "a clip of a succeeded task";
    throw notYours(kind, named.field, named.id, what);
  }
  if (named.field === "upload_id" && clip.action !== "UPLOAD") throw notYours(kind, named.field, named.id, "an upload");
  if (clip.audioUrl === "") throw notYours(kind, named.field, named.id, "an audio clip");
  return { ...clip, field: named.field, clipId: named.id };
}
