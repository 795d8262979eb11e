import { type Static, Type } from "@sinclair/typebox";

/**
 * The body of `POST /v1/messages` and `/v1/messages/count_tokens`. The shape of each field is
 * checked here; which block may stand where in `request.ts`, so that errors name the field.
 */
const Open = { additionalProperties: true } as const;

const Block = Type.Object({ type: Type.String({ minLength: 1 }) }, Open);

const Message = Type.Object(
  {
    role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
    content: Type.Union([Type.String(), Type.Array(Block)]),
  },
  Open,
);

const Tool = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, pattern: "^[a-zA-Z0-9_-]+$" }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Object({}, Open),
  },
  Open,
);

const ToolChoice = Type.Object(
  {
    type: Type.Union([Type.Literal("auto"), Type.Literal("any"), Type.Literal("tool"), Type.Literal("none")]),
    name: Type.Optional(Type.String()),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  Open,
);

const Common = {
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Message, { minItems: 1 }),
  system: Type.Optional(Type.Union([Type.String(), Type.Array(Block)])),
  tools: Type.Optional(Type.Array(Tool)),
  tool_choice: Type.Optional(ToolChoice),
  thinking: Type.Optional(Type.Object({ type: Type.String() }, Open)),
};

export const MessagesBody = Type.Object(
  {
    ...Common,
    max_tokens: Type.Integer({ minimum: 1 }),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stream: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, Open)),
  },
  Open,
);
export type MessagesBody = Static<typeof MessagesBody>;

export const CountTokensBody = Type.Object(Common, Open);
export type CountTokensBody = Static<typeof CountTokensBody>;
