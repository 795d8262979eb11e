import { type TSchema, Type } from "@sinclair/typebox";

/** Request schemas of the task surface; they also describe the bodies in the OpenAPI document. */

const Uuid = Type.String({ format: "uuid", description: "UUID of a clip" });
const Weight = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
/** Accepted by every submit; checked against the SSRF guard in the handler. */
const CallbackUrl = Type.Optional(
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
  { additionalProperties: false, description: "MUSIC task of family audioa" },
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
  { additionalProperties: false, description: "MUSIC task of family audiob" },
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
  { additionalProperties: false, description: "REPLACE task (family audioa)" },
);

export const InstrumentalsSwapSchema = Type.Object(
  {
    clip_id: Uuid,
    sound_prompt: Type.String({ minLength: 1, maxLength: 1000 }),
    cover_strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    callback_url: CallbackUrl,
  },
  { additionalProperties: false, description: "INSTRUMENTALS_SWAP task (family audioa)" },
);

export const SUBMIT_SCHEMAS: Record<string, Record<string, TSchema>> = {
  audioa: { MUSIC: AudioaMusicSchema, REPLACE: ReplaceSchema, INSTRUMENTALS_SWAP: InstrumentalsSwapSchema },
  audiob: { MUSIC: AudiobMusicSchema },
};

// Printable ASCII only: a NUL or control character is no id and would upset the store.
const PublicTaskId = Type.String({ pattern: "^[\\x21-\\x7e]{1,64}$" });

export const FetchParams = Type.Object({ id: PublicTaskId }, { additionalProperties: false });

/** The batch body; `action` is accepted (and ignored) so gateways can be chained. */
export function batchFetchSchema(maxIds: number) {
  return Type.Object(
    {
      ids: Type.Array(PublicTaskId, { minItems: 1, maxItems: maxIds, description: `1 to ${maxIds} public task ids` }),
      action: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  );
}

export const CallbackParams = Type.Object(
  { secret: Type.String({ pattern: "^[A-Za-z0-9]{16,64}$" }) },
  { additionalProperties: false },
);

/** The task record of section 2.2 of the interface document, as fetch answers it. */
export const TaskRecordSchema = Type.Object(
  {
    id: Type.Integer({ description: "internal record number" }),
    created_at: Type.Integer({ description: "Unix seconds" }),
    updated_at: Type.Integer({ description: "Unix seconds" }),
    task_id: Type.String({ description: "public id, prefix task_" }),
    platform: Type.String({ examples: ["audioa"] }),
    user_id: Type.Integer(),
    group: Type.String(),
    channel_id: Type.Integer(),
    quota: Type.Integer({ description: "quota charged for the task" }),
    action: Type.String({ examples: ["MUSIC"] }),
    status: Type.String({ examples: ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS", "SUCCESS", "FAILURE"] }),
    fail_reason: Type.String({ description: "empty when there is no failure" }),
    result_url: Type.Optional(Type.String({ description: "once SUCCESS: the audio URL of the first clip" })),
    submit_time: Type.Integer(),
    start_time: Type.Integer(),
    finish_time: Type.Integer({ description: "0 while unfinished" }),
    progress: Type.String({ examples: ["20%"] }),
    properties: Type.Object(
      { input: Type.String(), upstream_model_name: Type.String(), origin_model_name: Type.String() },
      { additionalProperties: false },
    ),
    // Written as stored: the clip shapes differ by family (sections 2.3 and 2.4).
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "While running: progress, status, task_id (upstream side, IN_PROGRESS only). After SUCCESS: " +
          "clips (and, family audioa, progress and quota). After FAILURE: progress, status, task_id, fail_reason.",
      },
    ),
  },
  { additionalProperties: false },
);

const envelope = (data: TSchema, message: string, description: string) =>
  Type.Object(
    { code: Type.Literal("success"), message: Type.String({ examples: [message] }), data },
    { additionalProperties: false, description },
  );

export const SubmitAnswer = envelope(
  Type.String({ description: "the public task id", examples: ["task_0123456789abcdefABCDEF0123456789"] }),
  "task submitted successfully",
  "Accepted and charged: `data` is the public task id",
);
export const FetchOneAnswer = envelope(TaskRecordSchema, "", "The task record");
export const FetchBatchAnswer = envelope(
  Type.Array(TaskRecordSchema, { description: "the caller's tasks among the ids, in the order asked" }),
  "",
  "The records of the caller's tasks among the ids; others are left out",
);
export const CallbackAnswer = envelope(Type.Null(), "", "The task will be polled now");
