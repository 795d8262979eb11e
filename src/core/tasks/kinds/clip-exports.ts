import { Type } from "@sinclair/typebox";
import type { TaskFamily } from "../families.js";
import { audioKind, fromSourceClip, type TaskKind } from "../task-kind.js";
import { actionOptions, CallbackUrl, Uuid } from "./fields.js";

export type StemsKind = "vocals" | "all";

/** STEMS: one of the caller's clips separated into stems. */
export interface StemsBody {
  clip_id: string;
  kind: StemsKind;
}

/** WAV and MUSIC_VIDEO: one of the caller's clips. */
export interface ClipBody {
  clip_id: string;
}

const stemsSchema = (family: TaskFamily) =>
  Type.Object(
    {
      clip_id: Uuid,
      kind: Type.Union([Type.Literal("vocals"), Type.Literal("all")], {
        description: "vocals: vocals and instrumental; all: every stem (vocals, backing vocals, drums, bass...)",
      }),
      callback_url: CallbackUrl,
    },
    actionOptions(family, "STEMS", "separates a clip into stems, one result clip per stem"),
  );

/** STEMS, WAV, MUSIC_VIDEO: nothing beyond the schema. */
const nothingMore = () => {};

function clipOnlyKind(family: TaskFamily, action: string, what: string): TaskKind<ClipBody> {
  return audioKind<ClipBody>({
    family,
    action,
    schema: Type.Object({ clip_id: Uuid, callback_url: CallbackUrl }, actionOptions(family, action, what)),
    check: nothingMore,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: () => "",
  });
}

/** The actions that turn one of the caller's clips into other files: stems, a WAV, a video. */
export function clipExportKinds(family: TaskFamily): TaskKind[] {
  const stems = audioKind<StemsBody>({
    family,
    action: "STEMS",
    schema: stemsSchema(family),
    check: nothingMore,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: (body) => body.kind ?? "",
  });
  return [
    stems,
    clipOnlyKind(family, "WAV", "a lossless WAV of a clip, in the result clip's audio_url"),
    clipOnlyKind(family, "MUSIC_VIDEO", "an MP4 of a clip with its cover art, in the result clip's video_url"),
  ];
}
