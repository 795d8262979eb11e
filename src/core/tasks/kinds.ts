import type { TSchema } from "@sinclair/typebox";
import { FAMILY_SPECS, type TaskFamily } from "./families.js";
import { AudioaMusicSchema, AudiobMusicSchema, InstrumentalsSwapSchema, ReplaceSchema } from "./kind-schemas.js";
import {
  type AudioaMusicBody,
  type AudiobMusicBody,
  checkAudioaMusic,
  checkAudiobMusic,
  checkInstrumentalsSwap,
  checkReplace,
  type ReplaceBody,
  type TaskBody,
} from "./request-bodies.js";

/**
 * One kind of task: a family's action. Everything the gateway needs to accept one lives here;
 * the upstream adapters say which kinds their protocol can do (see upstreams/task-adapters.ts).
 */
export interface TaskKind {
  /** With `action`, the kind's price key: its price is the row `task:<family>:<action>`. */
  family: TaskFamily;
  action: string;
  /** Types and bounds of the known fields; other fields are let through. */
  schema: TSchema;
  /** The rules the schema cannot say (fields that depend on each other); throws a 400 naming the field. */
  check(body: TaskBody): void;
  /** Closed until the operator names it in `tasks.enabledActions` (`ACTION` or `family:ACTION`). */
  closedByDefault: boolean;
  /**
   * The body field naming a clip of one of the caller's succeeded tasks, whose model the task
   * inherits; absent when the kind works on no earlier clip.
   */
  sourceClipField?: "clip_id";
  /** The model the client asked for, or the family default (kinds with a source clip take its model). */
  originModel(body: TaskBody, sourceClipModel: string): string;
  /** The text shown as `properties.input`. */
  input(body: TaskBody): string;
  /** The name of the operation at the upstream (task-relay: the path word after /submit/). */
  upstreamOperation: string;
  /** The field of the upstream body that carries the (mapped) model; absent when none is sent. */
  upstreamModelField?: string;
}

const soundPrompt = (body: TaskBody) => (body as ReplaceBody).sound_prompt ?? "";
const fromSourceClip = (_body: TaskBody, sourceClipModel: string) => sourceClipModel;

export const TASK_KINDS: readonly TaskKind[] = [
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
  },
  {
    family: "audioa",
    action: "REPLACE",
    schema: ReplaceSchema,
    check: checkReplace,
    closedByDefault: true,
    sourceClipField: "clip_id",
    originModel: fromSourceClip,
    input: soundPrompt,
    upstreamOperation: "REPLACE",
  },
  {
    family: "audioa",
    action: "INSTRUMENTALS_SWAP",
    schema: InstrumentalsSwapSchema,
    check: checkInstrumentalsSwap,
    closedByDefault: true,
    sourceClipField: "clip_id",
    originModel: fromSourceClip,
    input: soundPrompt,
    upstreamOperation: "INSTRUMENTALS_SWAP",
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
  },
];

/** `family:ACTION`, the name of a kind in adapters and settings. */
export function kindName(kind: { family: string; action: string }): string {
  return `${kind.family}:${kind.action}`;
}

/** The kind of a family's action, or undefined when the family has no such action. */
export function findKind(family: string, action: string): TaskKind | undefined {
  return TASK_KINDS.find((k) => k.family === family && k.action === action);
}

/** The kinds of one family, in registry order. */
export function kindsOf(family: TaskFamily): TaskKind[] {
  return TASK_KINDS.filter((k) => k.family === family);
}

/** Whether a kind is open under the operator's `enabledActions` setting. */
export function isKindOpen(kind: TaskKind, enabledActions: readonly string[]): boolean {
  if (!kind.closedByDefault) return true;
  return enabledActions.includes(kind.action) || enabledActions.includes(kindName(kind));
}
