import {
  type CoverBody,
  checkExtend,
  checkOneSource,
  type ExtendBody,
  type LayerBody,
  type SourceClipField,
} from "../action-bodies.js";
import { coverSchema, extendSchema, layerSchema } from "../action-schemas.js";
import type { TaskFamily } from "../families.js";
import type { TaskBody } from "../request-bodies.js";
import type { TaskKind } from "../task-kind.js";

const CLIP_OR_UPLOAD: readonly SourceClipField[] = ["clip_id", "upload_id"];
const promptOf = (body: TaskBody) => (body as { prompt?: string }).prompt ?? "";
/** The model asked for, else the source clip's. */
const askedOrSource = (body: TaskBody, sourceClipModel: string) => (body as { mv?: string }).mv ?? sourceClipModel;
const fromSourceClip = (_body: TaskBody, sourceClipModel: string) => sourceClipModel;

function layerKind(family: TaskFamily, action: string, withTitle: boolean): TaskKind {
  return {
    family,
    action,
    schema: layerSchema(family, action, withTitle),
    check: (body) => checkOneSource(body as LayerBody),
    closedByDefault: false,
    sourceClipFields: CLIP_OR_UPLOAD,
    originModel: fromSourceClip,
    input: promptOf,
    upstreamOperation: action,
    results: "audio",
  };
}

/** The actions that make a new song out of one of the caller's clips or uploads. */
export function clipEditKinds(family: TaskFamily): TaskKind[] {
  return [
    {
      family,
      action: "EXTEND",
      schema: extendSchema(family),
      check: (body) => checkExtend(body as ExtendBody),
      closedByDefault: false,
      sourceClipFields: ["clip_id"],
      originModel: askedOrSource,
      input: promptOf,
      upstreamOperation: "EXTEND",
      upstreamModelField: "mv",
      results: "audio",
    },
    {
      family,
      action: "COVER",
      schema: coverSchema(family),
      check: (body) => checkOneSource(body as CoverBody),
      closedByDefault: false,
      sourceClipFields: CLIP_OR_UPLOAD,
      originModel: askedOrSource,
      input: promptOf,
      upstreamOperation: "COVER",
      upstreamModelField: "mv",
      results: "audio",
    },
    layerKind(family, "ADD_INSTRUMENTAL", true),
    layerKind(family, "ADD_VOCALS", true),
    layerKind(family, "VOCALS_SWAP", false),
  ];
}
