import { Type } from "@sinclair/typebox";
import type { TaskFamily } from "../families.js";

/**
 * The schema fields the kinds share. A kind's schema says the types and bounds of the fields the
 * gateway knows (a wrong one is a 400 naming the field); other fields are let through: a
 * task-relay upstream gets them unchanged, other protocols ignore them. The schemas also describe
 * the bodies in the OpenAPI document; docs/tasks.md lists the bounds.
 */

export const Uuid = Type.String({ format: "uuid", description: "UUID of a clip" });

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

/** Longest prompt (lyrics or description) of a further action. */
export const ACTION_PROMPT_MAX = 3000;

export const Prompt = (description: string) =>
  Type.Optional(Type.String({ maxLength: ACTION_PROMPT_MAX, description }));
export const Tags = Type.Optional(Type.String({ maxLength: 200, description: "Style, comma-separated" }));
export const Title = Type.Optional(Type.String({ maxLength: 120 }));
export const UploadId = Type.String({ format: "uuid", description: "The clip id an UPLOAD task answered" });

/** A model name of the family: `mv` for audioa (e.g. chirp-v3-5), the same field for audiob (e.g. V4_5). */
export function ModelName(family: TaskFamily) {
  return family === "audioa"
    ? Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "Model version, e.g. chirp-v3-5" }))
    : Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,32}$", description: "Model, e.g. V4_5" }));
}

/** The options of a further action's schema: unknown fields let through, what it does described. */
export const actionOptions = (family: TaskFamily, action: string, what: string) => ({
  additionalProperties: true,
  description: `${action} task of family ${family}: ${what}`,
});
