import { Type } from "@sinclair/typebox";
import { MAX_BATCH_REQUESTS, MAX_DIMENSIONS } from "../../core/embeddings/request.js";

const Open = { additionalProperties: true } as const;

const TextPart = Type.Object({ text: Type.Optional(Type.String()) }, Open);

const EmbedFields = {
  content: Type.Object(
    { role: Type.Optional(Type.String()), parts: Type.Array(TextPart, { minItems: 1 }) },
    { ...Open, description: "The text to embed (text parts only; several are joined by line breaks)" },
  ),
  taskType: Type.Optional(Type.String({ examples: ["RETRIEVAL_DOCUMENT"] })),
  title: Type.Optional(Type.String({ description: "The document's title (with taskType RETRIEVAL_DOCUMENT)" })),
  outputDimensionality: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DIMENSIONS })),
};

/** The body of `:embedContent`. */
export const EmbedContentBody = Type.Object({ model: Type.Optional(Type.String()), ...EmbedFields }, Open);

/** The body of `:batchEmbedContents`: each request names the model of the path. */
export const BatchEmbedContentsBody = Type.Object(
  {
    requests: Type.Array(
      Type.Object({ model: Type.String({ examples: ["models/gemini-embedding-001"] }), ...EmbedFields }, Open),
      {
        minItems: 1,
        maxItems: MAX_BATCH_REQUESTS,
      },
    ),
  },
  Open,
);

const Embedding = Type.Object({ values: Type.Array(Type.Number()) }, Open);

/** What `:embedContent` answers (the document only: the route writes JSON text). */
export const EmbedContentAnswer = {
  description: "The input's vector",
  content: { "application/json": { schema: Type.Object({ embedding: Embedding }, Open) } },
};

/** What `:batchEmbedContents` answers (the document only). */
export const BatchEmbedContentsAnswer = {
  description: "One vector per request, in order",
  content: { "application/json": { schema: Type.Object({ embeddings: Type.Array(Embedding) }, Open) } },
};
