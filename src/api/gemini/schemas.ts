import { type Static, Type } from "@sinclair/typebox";

/**
 * The request body of `:generateContent` and `:streamGenerateContent`. Fields the gateway reads
 * are typed; everything else (systemInstruction, tools, safetySettings, part kinds it does not
 * know...) is allowed and passed upstream untouched.
 */
const Open = { additionalProperties: true } as const;

const Part = Type.Object(
  {
    text: Type.Optional(Type.String()),
    thought: Type.Optional(Type.Boolean()),
    inlineData: Type.Optional(Type.Object({ mimeType: Type.String(), data: Type.String() }, Open)),
    fileData: Type.Optional(Type.Object({ mimeType: Type.Optional(Type.String()), fileUri: Type.String() }, Open)),
  },
  Open,
);

const Role = Type.Unsafe<"user" | "model">({ type: "string", pattern: "^(user|model)$" });

const Content = Type.Object(
  {
    role: Type.Optional(Role),
    parts: Type.Array(Part, { minItems: 1 }),
  },
  Open,
);

const GenerationConfig = Type.Object(
  {
    temperature: Type.Optional(Type.Number({ minimum: 0 })),
    topP: Type.Optional(Type.Number({ minimum: 0 })),
    topK: Type.Optional(Type.Number({ minimum: 0 })),
    candidateCount: Type.Optional(Type.Integer({ minimum: 1 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stopSequences: Type.Optional(Type.Array(Type.String())),
    presencePenalty: Type.Optional(Type.Number()),
    frequencyPenalty: Type.Optional(Type.Number()),
    seed: Type.Optional(Type.Integer()),
    responseMimeType: Type.Optional(Type.String()),
    responseModalities: Type.Optional(Type.Array(Type.String())),
    thinkingConfig: Type.Optional(
      Type.Object(
        { thinkingBudget: Type.Optional(Type.Integer()), includeThoughts: Type.Optional(Type.Boolean()) },
        Open,
      ),
    ),
  },
  Open,
);

export const GenerateContentBody = Type.Object(
  {
    contents: Type.Array(Content, { minItems: 1 }),
    systemInstruction: Type.Optional(Type.Object({ parts: Type.Array(Part) }, Open)),
    generationConfig: Type.Optional(GenerationConfig),
  },
  Open,
);
export type GenerateContentBody = Static<typeof GenerateContentBody>;

export const ModelParams = Type.Object({ target: Type.String({ minLength: 1 }) });

export const ContentQuery = Type.Object(
  {
    alt: Type.Optional(Type.Unsafe<"sse" | "json">({ type: "string", pattern: "^(sse|json)$" })),
    key: Type.Optional(Type.String()),
  },
  Open,
);

/**
 * What the content methods answer, for the document only: the gateway writes the upstream's own
 * JSON text (and its events) as they came, so these schemas never re-serialise an answer.
 */
const ResponsePart = Type.Object(
  { text: Type.Optional(Type.String()), thought: Type.Optional(Type.Boolean()) },
  { ...Open, description: "a part of the answer; inline data and other part kinds pass through" },
);

export const GenerateContentResponse = Type.Object(
  {
    candidates: Type.Array(
      Type.Object(
        {
          content: Type.Object({ role: Type.String({ examples: ["model"] }), parts: Type.Array(ResponsePart) }, Open),
          finishReason: Type.Optional(Type.String({ examples: ["STOP"] })),
        },
        Open,
      ),
    ),
    usageMetadata: Type.Optional(
      Type.Object(
        {
          promptTokenCount: Type.Integer(),
          candidatesTokenCount: Type.Optional(Type.Integer()),
          totalTokenCount: Type.Integer(),
        },
        Open,
      ),
    ),
    modelVersion: Type.Optional(Type.String()),
  },
  Open,
);

/** `:countTokens`: the upstream's count of the prompt, or the gateway's estimate. */
export const CountTokensResponse = Type.Object({ totalTokens: Type.Integer({ minimum: 0 }) }, Open);

/** The 200 answer of every method; the document shows each method its own media types. */
export const ContentAnswer = {
  description:
    "The upstream's answer, relayed as it came (countTokens: the upstream's count, or the gateway's estimate when the header x-gateway-token-count says estimated)",
  content: {
    "application/json": {
      schema: Type.Union([GenerateContentResponse, Type.Array(GenerateContentResponse), CountTokensResponse], {
        description:
          "generateContent: one answer; streamGenerateContent without alt=sse: every chunk in one array; " +
          "countTokens: the prompt's token count",
      }),
    },
    "text/event-stream": {
      schema: Type.String({
        description:
          "streamGenerateContent with alt=sse: one `data: <GenerateContentResponse JSON>` event per chunk; " +
          "an error after the first event is an event holding a Google error body",
      }),
    },
  },
};
