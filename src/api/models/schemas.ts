import { Type } from "@sinclair/typebox";

// The answers of `GET /v1/models` (OpenAI's model objects), for the API document.

const Open = { additionalProperties: true } as const;

const Model = Type.Object(
  { id: Type.String(), object: Type.Literal("model"), created: Type.Integer(), owned_by: Type.String() },
  Open,
);

export const ModelList = Type.Object(
  { object: Type.Literal("list"), data: Type.Array(Model) },
  { ...Open, description: "The models the token may use" },
);
export const ModelObject = Type.Object(Model.properties, { ...Open, description: "One model the token may use" });
