import { GatewayError } from "../errors.js";
import type { AudiobTuning } from "./clips.js";
import { FAMILY_SPECS, type TaskFamily } from "./families.js";

/** MUSIC body of family audioa: the `task-relay` fields. */
export interface AudioaMusicBody {
  prompt?: string;
  gpt_description_prompt?: string;
  tags?: string;
  title?: string;
  mv?: string;
  make_instrumental?: boolean;
  continue_clip_id?: string;
  continue_at?: number;
}

/** MUSIC body of family audiob: snake_case of the `generate-record` fields. */
export interface AudiobMusicBody {
  prompt?: string;
  style?: string;
  title?: string;
  custom_mode?: boolean;
  instrumental?: boolean;
  model?: string;
  negative_tags?: string;
  style_weight?: number;
  weirdness_constraint?: number;
  audio_weight?: number;
}

export interface ReplaceBody {
  clip_id: string;
  starts: number;
  ends?: number;
  sound_prompt: string;
}

export interface InstrumentalsSwapBody {
  clip_id: string;
  sound_prompt: string;
  cover_strength?: number;
}

export type TaskBody = AudioaMusicBody | AudiobMusicBody | ReplaceBody | InstrumentalsSwapBody;

/** Longest prompt of audiob outside custom mode (the upstream's own limit). */
export const AUDIOB_SIMPLE_PROMPT_MAX = 500;

function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${message}`, { param: field });
}

function blank(v: string | undefined): boolean {
  return v === undefined || v.trim() === "";
}

function hasTwoDecimalsAtMost(x: number): boolean {
  return Math.abs(Math.round(x * 100) - x * 100) < 1e-6;
}

/**
 * The rules a body schema cannot say (fields that depend on each other). Throws a 400 naming
 * the field; the schema has already checked types, bounds and unknown fields.
 */
export function checkTaskBody(family: TaskFamily, action: string, body: TaskBody): void {
  if (family === "audioa" && action === "MUSIC") {
    const b = body as AudioaMusicBody;
    if (blank(b.prompt) && blank(b.gpt_description_prompt)) {
      throw invalid("prompt", "or body.gpt_description_prompt is required (lyrics or a description of the song)");
    }
    if ((b.continue_clip_id === undefined) !== (b.continue_at === undefined)) {
      const missing = b.continue_clip_id === undefined ? "continue_clip_id" : "continue_at";
      throw invalid(missing, "is required when continuing a clip (continue_clip_id and continue_at go together)");
    }
    return;
  }
  if (family === "audiob" && action === "MUSIC") {
    const b = body as AudiobMusicBody;
    if (b.custom_mode) {
      if (blank(b.style)) throw invalid("style", "is required in custom mode");
      if (blank(b.title)) throw invalid("title", "is required in custom mode");
      if (!b.instrumental && blank(b.prompt))
        throw invalid("prompt", "(the lyrics) is required in custom mode unless instrumental is true");
    } else {
      if (blank(b.prompt)) throw invalid("prompt", "is required");
      if ((b.prompt ?? "").length > AUDIOB_SIMPLE_PROMPT_MAX) {
        throw invalid("prompt", `must be at most ${AUDIOB_SIMPLE_PROMPT_MAX} characters unless custom_mode is true`);
      }
    }
    for (const field of ["style_weight", "weirdness_constraint", "audio_weight"] as const) {
      const v = b[field];
      if (v !== undefined && !hasTwoDecimalsAtMost(v)) throw invalid(field, "must have at most two decimals");
    }
    return;
  }
  if (action === "REPLACE") {
    const b = body as ReplaceBody;
    if (b.ends !== undefined && !(b.starts < b.ends)) throw invalid("ends", "must be greater than body.starts");
    if (blank(b.sound_prompt)) throw invalid("sound_prompt", "must not be blank");
    return;
  }
  if (action === "INSTRUMENTALS_SWAP") {
    if (blank((body as InstrumentalsSwapBody).sound_prompt)) throw invalid("sound_prompt", "must not be blank");
  }
}

/** The model the client asked for (or the family default); REPLACE and SWAP take the source clip's. */
export function originModelOf(family: TaskFamily, action: string, body: TaskBody, sourceClipModel = ""): string {
  if (action !== "MUSIC") return sourceClipModel;
  if (family === "audioa") return (body as AudioaMusicBody).mv ?? FAMILY_SPECS.audioa.defaultModel;
  return (body as AudiobMusicBody).model ?? FAMILY_SPECS.audiob.defaultModel;
}

/** The text shown as `properties.input`. */
export function inputOf(family: TaskFamily, action: string, body: TaskBody): string {
  if (action !== "MUSIC") return (body as ReplaceBody).sound_prompt ?? "";
  if (family === "audioa") {
    const b = body as AudioaMusicBody;
    return b.prompt || b.gpt_description_prompt || "";
  }
  return (body as AudiobMusicBody).prompt ?? "";
}

/** The JSON sent to a `task-relay` upstream: the client's body, with the model mapped. */
export function relayRequestBody(action: string, body: TaskBody, upstreamModel: string): Record<string, unknown> {
  if (action !== "MUSIC") return { ...body };
  return { ...body, mv: upstreamModel };
}

/** The camelCase JSON sent to a `generate-record` upstream. */
export function recordRequestBody(
  body: AudiobMusicBody,
  upstreamModel: string,
  callbackUrl: string | null,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt: body.prompt ?? "",
    customMode: body.custom_mode ?? false,
    instrumental: body.instrumental ?? false,
    model: upstreamModel,
  };
  if (body.style !== undefined) out.style = body.style;
  if (body.title !== undefined) out.title = body.title;
  if (body.negative_tags !== undefined) out.negativeTags = body.negative_tags;
  if (body.style_weight !== undefined) out.styleWeight = body.style_weight;
  if (body.weirdness_constraint !== undefined) out.weirdnessConstraint = body.weirdness_constraint;
  if (body.audio_weight !== undefined) out.audioWeight = body.audio_weight;
  if (callbackUrl !== null) out.callBackUrl = callbackUrl;
  return out;
}

/** The tuning values of an audiob request, shown on its clips. */
export function audiobTuning(body: AudiobMusicBody): AudiobTuning {
  return {
    negative_tags: body.negative_tags ?? null,
    style_weight: body.style_weight ?? null,
    weirdness_constraint: body.weirdness_constraint ?? null,
    audio_weight: body.audio_weight ?? null,
  };
}
