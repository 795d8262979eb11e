import { type TSchema, Type } from "@sinclair/typebox";

/** Fetch, callback and answer schemas of the task surface (submit bodies: each kind's schema, core/tasks/kinds/). */

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
    result_url: Type.Optional(
      Type.String({
        description: "once SUCCESS: the audio URL of the first clip, else its video URL (empty for lyric sheets)",
      }),
    ),
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
