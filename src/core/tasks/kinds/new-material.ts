import { Type } from "@sinclair/typebox";
import { FAMILY_SPECS, type TaskFamily } from "../families.js";
import { blank, invalid } from "../field-errors.js";
import { audioKind, type TaskKind } from "../task-kind.js";
import { ACTION_PROMPT_MAX, actionOptions, CallbackUrl } from "./fields.js";

/** LYRICS: a lyric sheet written from a description. */
export interface LyricsBody {
  prompt: string;
}

/** UPLOAD: an audio file the gateway brings in; its clip can then be a source (`upload_id`). */
export interface UploadBody {
  url: string;
}

const lyricsSchema = (family: TaskFamily) =>
  Type.Object(
    {
      prompt: Type.String({ minLength: 1, maxLength: ACTION_PROMPT_MAX, description: "What the song is about" }),
      callback_url: CallbackUrl,
    },
    actionOptions(family, "LYRICS", "lyric sheets (title and text with section markers), no audio"),
  );

const uploadSchema = (family: TaskFamily) =>
  Type.Object(
    {
      url: Type.String({ minLength: 1, maxLength: 2000, description: "http(s) URL of an audio file" }),
      callback_url: CallbackUrl,
    },
    actionOptions(family, "UPLOAD", "brings an audio file in; the result clip's id is an upload_id"),
  );

/** LYRICS: a prompt that is not blank. */
function checkLyrics(body: LyricsBody): void {
  if (blank(body.prompt)) throw invalid("prompt", "must not be blank");
}

/** UPLOAD: an http(s) URL (where it points is checked when the file is brought in). */
function checkUpload(body: UploadBody): void {
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

/** The actions that start from something new rather than a clip: lyric sheets and uploads. */
export function newMaterialKinds(family: TaskFamily): TaskKind[] {
  const familyDefault = () => FAMILY_SPECS[family].defaultModel;
  const lyrics = audioKind<LyricsBody>({
    family,
    action: "LYRICS",
    schema: lyricsSchema(family),
    check: checkLyrics,
    originModel: familyDefault,
    input: (body) => body.prompt ?? "",
    results: "lyrics",
  });
  const upload = audioKind<UploadBody>({
    family,
    action: "UPLOAD",
    schema: uploadSchema(family),
    check: checkUpload,
    originModel: familyDefault,
    input: (body) => body.url ?? "",
    intakeField: "url",
  });
  return [lyrics, upload];
}
