import { type TSchema, Type } from "@sinclair/typebox";
import { TaskRecordSchema } from "../../contracts/tasks.js";

/**
 * Fetch, callback and answer schemas of the task surface (submit bodies: each kind's schema,
 * core/tasks/kinds/; the task record itself: contracts/tasks.ts, shared with the console).
 */

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
