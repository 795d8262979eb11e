import { Type } from "@sinclair/typebox";
import type { TaskFamily } from "../families.js";
import { invalid } from "../field-errors.js";
import { audioKind, fromSourceClip, type SourceClipField, type TaskKind } from "../task-kind.js";
import { actionOptions, CallbackUrl, ModelName, Prompt, Tags, Title, UploadId, Uuid } from "./fields.js";

/** Furthest point (seconds) a clip can be continued from. */
export const CONTINUE_AT_MAX_SECONDS = 480;

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

const extendSchema = (family: TaskFamily) =>
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
    actionOptions(family, "EXTEND", "continues one of your clips from a point"),
  );

const coverSchema = (family: TaskFamily) =>
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
    actionOptions(family, "COVER", "a new arrangement keeping the melody of a clip or an upload (one of the two)"),
  );

const layerSchema = (family: TaskFamily, action: string, withTitle: boolean) =>
  Type.Object(
    {
      clip_id: Type.Optional(Uuid),
      upload_id: Type.Optional(UploadId),
      prompt: Prompt("Lyrics or description of the new layer"),
      tags: Tags,
      ...(withTitle ? { title: Title } : {}),
      callback_url: CallbackUrl,
    },
    actionOptions(family, action, "works on a clip or an upload (one of the two)"),
  );

/** COVER, ADD_INSTRUMENTAL, ADD_VOCALS, VOCALS_SWAP: exactly one of clip_id and upload_id. */
function checkOneSource(body: SourceBody): void {
  const hasClip = body.clip_id !== undefined;
  const hasUpload = body.upload_id !== undefined;
  if (hasClip === hasUpload) {
    throw invalid(
      "clip_id",
      hasClip ? "and body.upload_id cannot both be given: name one source" : "or body.upload_id is required",
    );
  }
}

const CLIP_OR_UPLOAD: readonly SourceClipField[] = ["clip_id", "upload_id"];
const promptOf = (body: { prompt?: string }) => body.prompt ?? "";
/** The model asked for, else the source clip's. */
const askedOrSource = (body: { mv?: string }, sourceClipModel: string) => body.mv ?? sourceClipModel;

function layerKind(family: TaskFamily, action: string, withTitle: boolean): TaskKind<LayerBody> {
  return audioKind<LayerBody>({
    family,
    action,
    schema: layerSchema(family, action, withTitle),
    check: checkOneSource,
    sourceClipFields: CLIP_OR_UPLOAD,
    originModel: fromSourceClip,
    input: promptOf,
  });
}

/** The actions that make a new song out of one of the caller's clips or uploads. */
export function clipEditKinds(family: TaskFamily): TaskKind[] {
  const extend = audioKind<ExtendBody>({
    family,
    action: "EXTEND",
    schema: extendSchema(family),
    // Nothing beyond the schema: clip_id and continue_at are required there.
    check: () => {},
    sourceClipFields: ["clip_id"],
    originModel: askedOrSource,
    input: promptOf,
    upstreamModelField: "mv",
  });
  const cover = audioKind<CoverBody>({
    family,
    action: "COVER",
    schema: coverSchema(family),
    check: checkOneSource,
    sourceClipFields: CLIP_OR_UPLOAD,
    originModel: askedOrSource,
    input: promptOf,
    upstreamModelField: "mv",
  });
  return [
    extend,
    cover,
    layerKind(family, "ADD_INSTRUMENTAL", true),
    layerKind(family, "ADD_VOCALS", true),
    layerKind(family, "VOCALS_SWAP", false),
  ];
}
