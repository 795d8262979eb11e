import type { AudiobMusicBody } from "../../core/tasks/kinds/music.js";

/**
 * The camelCase JSON sent to a `generate-record` upstream: the fields the protocol knows, taken
 * from the client's snake_case body; other fields of the body are not sent.
 */
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
