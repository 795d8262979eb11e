import { type Static, Type } from "@sinclair/typebox";
import { MAX_DIMENSIONS, MAX_INPUTS } from "../../core/embeddings/request.js";

const Tokens = Type.Array(Type.Integer({ minimum: 0 }), { description: "token ids" });

/** The body of `POST /v1/embeddings`, as OpenAI's API takes it. */
export const EmbeddingsBody = Type.Object(
  {
    model: Type.String({ minLength: 1, examples: ["text-embedding-3-small"] }),
    input: Type.Union([Type.String(), Type.Array(Type.String()), Tokens, Type.Array(Tokens)], {
      description: `A text, a list of texts, a list of token ids or a list of such lists (at most ${MAX_INPUTS} inputs; none empty). Token lists go only to upstreams that take them.`,
    }),
    dimensions: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DIMENSIONS,
        description: "The length of each vector (models that can shorten theirs)",
      }),
    ),
    encoding_format: Type.Optional(
      Type.Unsafe<"float" | "base64">({
        type: "string",
        enum: ["float", "base64"],
        description: "float: arrays of numbers; base64: little-endian float32s, base64-encoded",
      }),
    ),
    user: Type.Optional(Type.String({ description: "An id of the end user, passed upstream" })),
  },
  { additionalProperties: false },
);
export type EmbeddingsBody = Static<typeof EmbeddingsBody>;

const EmbeddingsList = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(
    Type.Object({
      object: Type.Literal("embedding"),
      index: Type.Integer({ minimum: 0 }),
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()], {
        description: "The vector: numbers, or base64 when encoding_format is base64",
      }),
    }),
  ),
  model: Type.String(),
  usage: Type.Object(
    { prompt_tokens: Type.Integer({ minimum: 0 }), total_tokens: Type.Integer({ minimum: 0 }) },
    { description: "The input tokens billed: the upstream's count, or the gateway's where the upstream reports none" },
  ),
});

/** The 200 answer, as OpenAI writes it (written as JSON text by the route; for the document only). */
export const EmbeddingsAnswer = {
  description: "One vector per input, in input order",
  content: { "application/json": { schema: EmbeddingsList } },
};
