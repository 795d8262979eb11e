import { Type } from "@sinclair/typebox";
import { GatewayError } from "../../errors.js";

/** Clip lengths the Videos API offers (seconds, as text). */
export const VIDEO_SECONDS = ["4", "8", "12"] as const;
/** Frame sizes the Videos API offers (width x height). */
export const VIDEO_SIZES = ["720x1280", "1280x720", "1024x1792", "1792x1024"] as const;
export const DEFAULT_VIDEO_SECONDS = "4";
export const DEFAULT_VIDEO_SIZE = "720x1280";

/** What a stored video task's body holds (the gateway's own record of the request). */
export interface VideoBody {
  prompt: string;
  model: string;
  seconds: string;
  size: string;
  /** The public id of the video this one remixes. */
  remixed_from_video_id?: string;
  /** How the reference image came: a file or a URL (its bytes travel beside the body, never in it). */
  input_reference?: { source: "file" | "url"; mime_type: string; bytes: number };
}

/** The create request's fields as JSON or a multipart form carries them (after the form is read). */
export const VideoCreateSchema = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 32_000, description: "What the video shows" }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Default sora-2" })),
    seconds: Type.Optional(
      Type.Union(
        VIDEO_SECONDS.map((s) => Type.Literal(s)),
        { description: "Default 4" },
      ),
    ),
    size: Type.Optional(
      Type.Union(
        VIDEO_SIZES.map((s) => Type.Literal(s)),
        { description: "Default 720x1280" },
      ),
    ),
    input_reference: Type.Optional(
      Type.Unknown({ description: "An image file (multipart), or {image_url} fetched by the gateway" }),
    ),
  },
  { additionalProperties: true },
);

export const VideoRemixSchema = Type.Object(
  { prompt: Type.String({ minLength: 1, maxLength: 32_000, description: "What to change" }) },
  { additionalProperties: true },
);

/** A 400 naming a field of the Videos API (its params have no `body.` prefix). */
export function invalidVideoField(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${field} ${message}`, { param: field });
}

/** The rules the schema cannot say: a prompt that is not only blanks, known seconds and size. */
export function checkVideoBody(body: Partial<VideoBody>): void {
  if (typeof body.prompt !== "string" || body.prompt.trim() === "") throw invalidVideoField("prompt", "is required");
  if (body.seconds !== undefined && !(VIDEO_SECONDS as readonly string[]).includes(body.seconds)) {
    throw invalidVideoField("seconds", `must be one of ${VIDEO_SECONDS.join(", ")}`);
  }
  if (body.size !== undefined && !(VIDEO_SIZES as readonly string[]).includes(body.size)) {
    throw invalidVideoField("size", `must be one of ${VIDEO_SIZES.join(", ")}`);
  }
}

/** The length a video is charged for (seconds). */
export function videoSecondsOf(body: Partial<VideoBody>): number {
  return Number(body.seconds ?? DEFAULT_VIDEO_SECONDS);
}
