import { type Static, Type } from "@sinclair/typebox";
import { GatewayError } from "../../core/errors.js";

/**
 * Body of POST /v1/images/generations. `model`, `prompt`, `image`, `aspect_ratio`, `n` and
 * `response_format` act; the other OpenAI fields are accepted for client compatibility and do
 * not change the result (see docs/images.md). Unknown fields are refused.
 */
export const ImageGenerationBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    prompt: Type.String({ maxLength: 32_000 }),
    // Checked by hand (string or array of strings) for messages that name the bad entry.
    image: Type.Optional(Type.Unknown()),
    aspect_ratio: Type.Optional(Type.String({ maxLength: 20 })),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 4 })),
    response_format: Type.Optional(Type.Unsafe<"url" | "b64_json">({ type: "string", enum: ["url", "b64_json"] })),
    size: Type.Optional(Type.String({ maxLength: 20 })),
    quality: Type.Optional(Type.String({ maxLength: 20 })),
    style: Type.Optional(Type.String({ maxLength: 20 })),
    background: Type.Optional(Type.String({ maxLength: 20 })),
    moderation: Type.Optional(Type.String({ maxLength: 20 })),
    output_format: Type.Optional(Type.String({ maxLength: 20 })),
    output_compression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type ImageGenerationBody = Static<typeof ImageGenerationBody>;

/** The answer: each image as the gateway's own URL, or its bytes with `response_format: b64_json`. */
export const ImagesResponse = Type.Object(
  {
    created: Type.Integer({ description: "Unix seconds" }),
    data: Type.Array(
      Type.Object(
        {
          url: Type.Optional(Type.String({ description: "the stored image (response_format url, the default)" })),
          b64_json: Type.Optional(Type.String({ description: "the image bytes (response_format b64_json)" })),
          revised_prompt: Type.String({ description: "the prompt as the gateway sent it" }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: "The generated images" },
);

/** The `image` field as a string, an array of strings or nothing; anything else is a 400. */
export function imageField(value: unknown): string | string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      throw new GatewayError("GW_ERR_VALIDATION", "body.image must hold at least one image when it is an array", {
        param: "image",
      });
    }
    value.forEach((entry, i) => {
      if (typeof entry !== "string") {
        throw new GatewayError("GW_ERR_VALIDATION", `body.image[${i}] must be a string (a URL or a data URL)`, {
          param: `image[${i}]`,
        });
      }
    });
    return value as string[];
  }
  throw new GatewayError("GW_ERR_VALIDATION", "body.image must be a string or an array of strings", {
    param: "image",
  });
}
