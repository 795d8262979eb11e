import { checkLyrics, checkUpload, type LyricsBody, type UploadBody } from "../action-bodies.js";
import { lyricsSchema, uploadSchema } from "../action-schemas.js";
import { FAMILY_SPECS, type TaskFamily } from "../families.js";
import type { TaskKind } from "../task-kind.js";

/** The actions that start from something new rather than a clip: lyric sheets and uploads. */
export function newMaterialKinds(family: TaskFamily): TaskKind[] {
  return [
    {
      family,
      action: "LYRICS",
      schema: lyricsSchema(family),
      check: (body) => checkLyrics(body as LyricsBody),
      closedByDefault: false,
      originModel: () => FAMILY_SPECS[family].defaultModel,
      input: (body) => (body as LyricsBody).prompt ?? "",
      upstreamOperation: "LYRICS",
      results: "lyrics",
    },
    {
      family,
      action: "UPLOAD",
      schema: uploadSchema(family),
      check: (body) => checkUpload(body as UploadBody),
      closedByDefault: false,
      originModel: () => FAMILY_SPECS[family].defaultModel,
      input: (body) => (body as UploadBody).url ?? "",
      upstreamOperation: "UPLOAD",
      results: "audio",
      intakeField: "url",
    },
  ];
}
