import { Type } from "@sinclair/typebox";

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
