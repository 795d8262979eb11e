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
