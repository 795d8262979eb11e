import { FAMILY_SPECS } from "../families.js";
import { AudioaMusicSchema, AudiobMusicSchema, InstrumentalsSwapSchema, ReplaceSchema } from "../kind-schemas.js";
import {
  type AudioaMusicBody,
  type AudiobMusicBody,
  checkAudioaMusic,
  checkAudiobMusic,
  checkInstrumentalsSwap,
  checkReplace,
  type ReplaceBody,
  type TaskBody,
} from "../request-bodies.js";
import type { TaskKind } from "../task-kind.js";

const soundPrompt = (body: TaskBody) => (body as ReplaceBody).sound_prompt ?? "";
const fromSourceClip = (_body: TaskBody, sourceClipModel: string) => sourceClipModel;

/** MUSIC of both families, and the closed edits of audioa (REPLACE, INSTRUMENTALS_SWAP). */
export const MUSIC_KINDS: readonly TaskKind[] = [
  {
    family: "audioa",
    action: "MUSIC",
    schema: AudioaMusicSchema,
    check: checkAudioaMusic,
    closedByDefault: false,
    originModel: (body) => (body as AudioaMusicBody).mv ?? FAMILY_SPECS.audioa.defaultModel,
    input: (body) => (body as AudioaMusicBody).prompt || (body as AudioaMusicBody).gpt_description_prompt || "",
    upstreamOperation: "MUSIC",
    upstreamModelField: "mv",
    results: "audio",
  },
  {
    family: "audioa",
    action: "REPLACE",
    schema: ReplaceSchema,
    check: checkReplace,
    closedByDefault: true,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: soundPrompt,
    upstreamOperation: "REPLACE",
    results: "audio",
  },
  {
    family: "audioa",
    action: "INSTRUMENTALS_SWAP",
    schema: InstrumentalsSwapSchema,
    check: checkInstrumentalsSwap,
    closedByDefault: true,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: soundPrompt,
    upstreamOperation: "INSTRUMENTALS_SWAP",
    results: "audio",
  },
  {
    family: "audiob",
    action: "MUSIC",
    schema: AudiobMusicSchema,
    check: checkAudiobMusic,
    closedByDefault: false,
    originModel: (body) => (body as AudiobMusicBody).model ?? FAMILY_SPECS.audiob.defaultModel,
    input: (body) => (body as AudiobMusicBody).prompt ?? "",
    upstreamOperation: "generate",
    upstreamModelField: "model",
    results: "audio",
  },
];
