import { type ClipBody, checkNothingMore, type StemsBody } from "../action-bodies.js";
import { clipOnlySchema, stemsSchema } from "../action-schemas.js";
import type { TaskFamily } from "../families.js";
import type { TaskBody } from "../request-bodies.js";
import type { TaskKind } from "../task-kind.js";

const fromSourceClip = (_body: TaskBody, sourceClipModel: string) => sourceClipModel;

function clipOnlyKind(family: TaskFamily, action: string, what: string): TaskKind {
  return {
    family,
    action,
    schema: clipOnlySchema(family, action, what),
    check: (body) => checkNothingMore(body as ClipBody),
    closedByDefault: false,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: () => "",
    upstreamOperation: action,
    results: "audio",
  };
}

/** The actions that turn one of the caller's clips into other files: stems, a WAV, a video. */
export function clipExportKinds(family: TaskFamily): TaskKind[] {
  return [
    {
      family,
      action: "STEMS",
      schema: stemsSchema(family),
      check: (body) => checkNothingMore(body as StemsBody),
      closedByDefault: false,
      sourceClipFields: ["clip_id"],
      originModel: fromSourceClip,
      input: (body) => (body as StemsBody).kind ?? "",
      upstreamOperation: "STEMS",
      results: "audio",
    },
    clipOnlyKind(family, "WAV", "a lossless WAV of a clip, in the result clip's audio_url"),
    clipOnlyKind(family, "MUSIC_VIDEO", "an MP4 of a clip with its cover art, in the result clip's video_url"),
  ];
}
