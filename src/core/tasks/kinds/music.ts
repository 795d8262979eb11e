import { Type } from "@sinclair/typebox";
import type { AudiobTuning } from "../clips.js";
import { FAMILY_SPECS } from "../families.js";
import { blank, invalid } from "../field-errors.js";
import { audioKind, fromSourceClip, type TaskKind } from "../task-kind.js";
import { CallbackUrl, Uuid } from "./fields.js";

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

/** REPLACE (audioa): a segment of one of the caller's clips made again. */
export interface ReplaceBody {
  clip_id: string;
  starts: number;
  ends?: number;
  sound_prompt: string;
}

/** INSTRUMENTALS_SWAP (audioa): a clip's instrumental made again. */
export interface InstrumentalsSwapBody {
  clip_id: string;
  sound_prompt: string;
  cover_strength?: number;
}

/** Longest prompt of audiob outside custom mode (the upstream's own limit). */
export const AUDIOB_SIMPLE_PROMPT_MAX = 500;

const Weight = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

const AudioaMusicSchema = Type.Object(
  {
    prompt: Type.Optional(Type.String({ maxLength: 5000, description: "Lyrics (custom mode)" })),
    gpt_description_prompt: Type.Optional(
      Type.String({ maxLength: 3000, description: "Description of the song (description mode)" }),
    ),
    tags: Type.Optional(Type.String({ maxLength: 1000, description: "Style" })),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    mv: Type.Optional(
      Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "Model version, e.g. chirp-v3-5" }),
    ),
    make_instrumental: Type.Optional(Type.Boolean()),
    continue_clip_id: Type.Optional(Uuid),
    continue_at: Type.Optional(
      Type.Number({ minimum: 0, maximum: 3600, description: "Seconds into the clip to continue from" }),
    ),
    callback_url: CallbackUrl,
  },
  { additionalProperties: true, description: "MUSIC task of family audioa" },
);

const AudiobMusicSchema = Type.Object(
  {
    prompt: Type.Optional(
      Type.String({ maxLength: 5000, description: "Description (at most 500 characters), or lyrics in custom mode" }),
    ),
    style: Type.Optional(Type.String({ maxLength: 1000 })),
    title: Type.Optional(Type.String({ maxLength: 100 })),
    custom_mode: Type.Optional(Type.Boolean()),
    instrumental: Type.Optional(Type.Boolean()),
    model: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,32}$", description: "e.g. V4_5" })),
    negative_tags: Type.Optional(Type.String({ maxLength: 1000 })),
    style_weight: Type.Optional(Weight("0..1, at most two decimals")),
    weirdness_constraint: Type.Optional(Weight("0..1, at most two decimals")),
    audio_weight: Type.Optional(Weight("0..1, at most two decimals")),
    callback_url: CallbackUrl,
  },
  { additionalProperties: true, description: "MUSIC task of family audiob" },
);

const ReplaceSchema = Type.Object(
  {
    clip_id: Uuid,
    starts: Type.Number({ minimum: 0, maximum: 3600, description: "Segment start, seconds" }),
    ends: Type.Optional(
      Type.Number({ minimum: 0, maximum: 3600, description: "Segment end, seconds; to the end when omitted" }),
    ),
    sound_prompt: Type.String({ minLength: 1, maxLength: 1000 }),
    callback_url: CallbackUrl,
  },
  { additionalProperties: true, description: "REPLACE task (family audioa)" },
);

const InstrumentalsSwapSchema = Type.Object(
  {
    clip_id: Uuid,
    sound_prompt: Type.String({ minLength: 1, maxLength: 1000 }),
    cover_strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    callback_url: CallbackUrl,
  },
  { additionalProperties: true, description: "INSTRUMENTALS_SWAP task (family audioa)" },
);

function hasTwoDecimalsAtMost(x: number): boolean {
  return Math.abs(Math.round(x * 100) - x * 100) < 1e-6;
}

/** audioa MUSIC: lyrics or a description, and continue_clip_id with continue_at. */
function checkAudioaMusic(b: AudioaMusicBody): void {
  if (blank(b.prompt) && blank(b.gpt_description_prompt)) {
    throw invalid("prompt", "or body.gpt_description_prompt is required (lyrics or a description of the song)");
  }
  if ((b.continue_clip_id === undefined) !== (b.continue_at === undefined)) {
    const missing = b.continue_clip_id === undefined ? "continue_clip_id" : "continue_at";
    throw invalid(missing, "is required when continuing a clip (continue_clip_id and continue_at go together)");
  }
}

/** audiob MUSIC: what custom mode requires, the short prompt outside it, two decimals on weights. */
function checkAudiobMusic(b: AudiobMusicBody): void {
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
function checkReplace(b: ReplaceBody): void {
  if (b.ends !== undefined && !(b.starts < b.ends)) throw invalid("ends", "must be greater than body.starts");
  if (blank(b.sound_prompt)) throw invalid("sound_prompt", "must not be blank");
}

/** INSTRUMENTALS_SWAP: a prompt. */
function checkInstrumentalsSwap(b: InstrumentalsSwapBody): void {
  if (blank(b.sound_prompt)) throw invalid("sound_prompt", "must not be blank");
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

const soundPrompt = (body: { sound_prompt?: string }) => body.sound_prompt ?? "";

/** MUSIC of both families, and the closed edits of audioa (REPLACE, INSTRUMENTALS_SWAP). */
export const MUSIC_KINDS: readonly TaskKind[] = [
  audioKind<AudioaMusicBody>({
    family: "audioa",
    action: "MUSIC",
    schema: AudioaMusicSchema,
    check: checkAudioaMusic,
    originModel: (body) => body.mv ?? FAMILY_SPECS.audioa.defaultModel,
    input: (body) => body.prompt || body.gpt_description_prompt || "",
    upstreamModelField: "mv",
  }),
  audioKind<ReplaceBody>({
    family: "audioa",
    action: "REPLACE",
    schema: ReplaceSchema,
    check: checkReplace,
    closedByDefault: true,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: soundPrompt,
  }),
  audioKind<InstrumentalsSwapBody>({
    family: "audioa",
    action: "INSTRUMENTALS_SWAP",
    schema: InstrumentalsSwapSchema,
    check: checkInstrumentalsSwap,
    closedByDefault: true,
    sourceClipFields: ["clip_id"],
    originModel: fromSourceClip,
    input: soundPrompt,
  }),
  audioKind<AudiobMusicBody>({
    family: "audiob",
    action: "MUSIC",
    schema: AudiobMusicSchema,
    check: checkAudiobMusic,
    originModel: (body) => body.model ?? FAMILY_SPECS.audiob.defaultModel,
    input: (body) => body.prompt ?? "",
    upstreamOperation: "generate",
    upstreamModelField: "model",
  }),
];
