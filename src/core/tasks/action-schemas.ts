import { Type } from "@sinclair/typebox";
import type { TaskFamily } from "./families.js";
import { CallbackUrl, Uuid } from "./kind-schemas.js";

/**
 * Request schemas of the further audio actions (LYRICS, EXTEND, COVER, the vocal and instrumental
 * layers, STEMS, WAV, MUSIC_VIDEO, UPLOAD). The same fields for both families; only the model
 * names differ. Bounds are the gateway's: docs/tasks.md lists them.
 */

/** Longest prompt (lyrics or description) of an action. */
export const ACTION_PROMPT_MAX = 3000;
/** Furthest point (seconds) a clip can be continued from. */
export const CONTINUE_AT_MAX_SECONDS = 480;

const Prompt = (description: string) => Type.Optional(Type.String({ maxLength: ACTION_PROMPT_MAX, description }));
const Tags = Type.Optional(Type.String({ maxLength: 200, description: "Style, comma-separated" }));
const Title = Type.Optional(Type.String({ maxLength: 120 }));
const UploadId = Type.String({ format: "uuid", description: "The clip id an UPLOAD task answered" });

/** A model name of the family: `mv` for audioa (e.g. chirp-v3-5), the same field for audiob (e.g. V4_5). */
function ModelName(family: TaskFamily) {
  return family === "audioa"
    ? Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "Model version, e.g. chirp-v3-5" }))
    : Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,32}$", description: "Model, e.g. V4_5" }));
}

const options = (family: TaskFamily, action: string, what: string) => ({
  additionalProperties: true,
  description: `${action} task of family ${family}: ${what}`,
});

export const lyricsSchema = (family: TaskFamily) =>
  Type.Object(
    {
      prompt: Type.String({ minLength: 1, maxLength: ACTION_PROMPT_MAX, description: "What the song is about" }),
      callback_url: CallbackUrl,
    },
    options(family, "LYRICS", "lyric sheets (title and text with section markers), no audio"),
  );

export const extendSchema = (family: TaskFamily) =>
  Type.Object(
    {
      clip_id: Uuid,
      continue_at: Type.Number({
        exclusiveMinimum: 0,
        maximum: CONTINUE_AT_MAX_SECONDS,
        description: `Seconds into the clip where the continuation starts (0 < x <= ${CONTINUE_AT_MAX_SECONDS})`,
      }),
      prompt: Prompt("Lyrics of the continuation"),
      tags: Tags,
      title: Title,
      mv: ModelName(family),
      callback_url: CallbackUrl,
    },
    options(family, "EXTEND", "continues one of your clips from a point"),
  );

export const coverSchema = (family: TaskFamily) =>
  Type.Object(
    {
      clip_id: Type.Optional(Uuid),
      upload_id: Type.Optional(UploadId),
      prompt: Prompt("Lyrics or description of the cover"),
      tags: Tags,
      title: Title,
      mv: ModelName(family),
      cover_strength: Type.Optional(
        Type.Number({ minimum: 0, maximum: 1, description: "How far the cover may move from the source (0..1)" }),
      ),
      callback_url: CallbackUrl,
    },
    options(family, "COVER", "a new arrangement keeping the melody of a clip or an upload (one of the two)"),
  );

export const layerSchema = (family: TaskFamily, action: string, withTitle: boolean) =>
  Type.Object(
    {
      clip_id: Type.Optional(Uuid),
      upload_id: Type.Optional(UploadId),
      prompt: Prompt("Lyrics or description of the new layer"),
      tags: Tags,
      ...(withTitle ? { title: Title } : {}),
      callback_url: CallbackUrl,
    },
    options(family, action, "works on a clip or an upload (one of the two)"),
  );

export const stemsSchema = (family: TaskFamily) =>
  Type.Object(
    {
      clip_id: Uuid,
      kind: Type.String({
        enum: ["vocals", "all"],
        description: "vocals: vocals and instrumental; all: every stem (vocals, backing vocals, drums, bass...)",
      }),
      callback_url: CallbackUrl,
    },
    options(family, "STEMS", "separates a clip into stems, one result clip per stem"),
  );

export const clipOnlySchema = (family: TaskFamily, action: string, what: string) =>
  Type.Object({ clip_id: Uuid, callback_url: CallbackUrl }, options(family, action, what));

export const uploadSchema = (family: TaskFamily) =>
  Type.Object(
    {
      url: Type.String({ minLength: 1, maxLength: 2000, description: "http(s) URL of an audio file" }),
      callback_url: CallbackUrl,
    },
    options(family, "UPLOAD", "brings an audio file in; the result clip's id is an upload_id"),
  );
