import { Type } from "@sinclair/typebox";

/**
 * Request schemas of the task kinds: the types and bounds of the fields the gateway knows (a wrong
 * one is a 400 naming the field). Other fields are let through: a task-relay upstream gets them
 * unchanged, other protocols ignore them. The schemas also describe the bodies in the OpenAPI
 * document.
 */

export const Uuid = Type.String({ format: "uuid", description: "UUID of a clip" });
const Weight = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
/** Accepted by every submit; checked against the SSRF guard when the task is accepted. */
export const CallbackUrl = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 2000,
    description:
      "http(s) URL the gateway POSTs the signed task record to when the task ends (SUCCESS or FAILURE); " +
      "when omitted, the user's default webhook, if any",
  }),
);

export const AudioaMusicSchema = Type.Object(
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

export const AudiobMusicSchema = Type.Object(
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

export const ReplaceSchema = Type.Object(
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

export const InstrumentalsSwapSchema = Type.Object(
  {
    clip_id: Uuid,
    sound_prompt: Type.String({ minLength: 1, maxLength: 1000 }),
    cover_strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    callback_url: CallbackUrl,
  },
  { additionalProperties: true, description: "INSTRUMENTALS_SWAP task (family audioa)" },
);
