import type { ActionBody } from "./action-bodies.js";
import type { AudiobTuning } from "./clips.js";
import { blank, invalid } from "./field-errors.js";

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

export type TaskBody = AudioaMusicBody | AudiobMusicBody | ReplaceBody | InstrumentalsSwapBody | ActionBody;

/** Longest prompt of audiob outside custom mode (the upstream's own limit). */
export const AUDIOB_SIMPLE_PROMPT_MAX = 500;

function hasTwoDecimalsAtMost(x: number): boolean {
  return Math.abs(Math.round(x * 100) - x * 100) < 1e-6;
}

/** audioa MUSIC: lyrics or a description, and continue_clip_id with continue_at. */
export function checkAudioaMusic(body: TaskBody): void {
  const b = body as AudioaMusicBody;
  if (blank(b.prompt) && blank(b.gpt_description_prompt)) {
    throw invalid("prompt", "or body.gpt_description_prompt is required (lyrics or a description of the song)");
  }
  if ((b.continue_clip_id === undefined) !== (b.continue_at === undefined)) {
    const missing = b.continue_clip_id === undefined ? "continue_clip_id" : "continue_at";
    throw invalid(missing, "is required when continuing a clip (continue_clip_id and continue_at go together)");
  }
}

/** audiob MUSIC: what custom mode requires, the short prompt outside it, two decimals on weights. */
export function checkAudiobMusic(body: TaskBody): void {
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
}

/** REPLACE: a segment that ends after it starts, and a prompt. */
export function checkReplace(body: TaskBody): void {
  const b = body as ReplaceBody;
  if (b.ends !== undefined && !(b.starts < b.ends)) throw invalid("ends", "must be greater than body.starts");
  if (blank(b.sound_prompt)) throw invalid("sound_prompt", "must not be blank");
}

/** INSTRUMENTALS_SWAP: a prompt. */
export function checkInstrumentalsSwap(body: TaskBody): void {
  if (blank((body as InstrumentalsSwapBody).sound_prompt)) throw invalid("sound_prompt", "must not be blank");
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
