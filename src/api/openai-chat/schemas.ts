import { type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * The body of `POST /v1/chat/completions`. The shape of every field the gateway reads is checked
 * here; the meaning of messages and parts (which role takes which part) in `request.ts`, so that
 * the error names the exact field.
 */
const Open = { additionalProperties: true } as const;

const Message = Type.Object(
  {
    role: Type.String({ minLength: 1 }),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, Open)), Type.Null()]),
    ),
    name: Type.Optional(Type.String()),
    tool_call_id: Type.Optional(Type.String()),
    // The legacy form of one tool call (before `tool_calls`).
    function_call: Type.Optional(
      Type.Union([Type.Object({ name: Type.String(), arguments: Type.String() }, Open), Type.Null()]),
    ),
    tool_calls: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String(),
            type: Type.Optional(Type.Literal("function")),
            function: Type.Object({ name: Type.String(), arguments: Type.String() }, Open),
          },
          Open,
        ),
      ),
    ),
  },
  Open,
);

const FunctionDef = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: "^[a-zA-Z0-9_-]+$" }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Object({}, Open)),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  Open,
);

const Tool = Type.Object(
  {
    type: Type.Literal("function"),
    function: FunctionDef,
  },
  Open,
);

const ToolChoice = Type.Union([
  Type.Union([Type.Literal("none"), Type.Literal("auto"), Type.Literal("required")]),
  Type.Object({ type: Type.Literal("function"), function: Type.Object({ name: Type.String() }, Open) }, Open),
]);

const ResponseFormat = Type.Union([
  Type.Object({ type: Type.Literal("text") }, Open),
  Type.Object({ type: Type.Literal("json_object") }, Open),
  Type.Object(
    {
      type: Type.Literal("json_schema"),
      json_schema: Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          schema: Type.Optional(Type.Object({}, Open)),
          strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
        },
        Open,
      ),
    },
    Open,
  ),
]);

const Nullable = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

export const ChatCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(Message, { minItems: 1 }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(
      Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, Open), Type.Null()]),
    ),
    n: Nullable(Type.Integer({ minimum: 1, maximum: 128 })),
    max_tokens: Nullable(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Nullable(Type.Integer({ minimum: 1 })),
    temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    seed: Nullable(Type.Integer()),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
    user: Type.Optional(Type.String()),
    tools: Type.Optional(Type.Array(Tool)),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    // The legacy form of `tools` and `tool_choice`.
    functions: Type.Optional(Type.Array(FunctionDef, { minItems: 1 })),
    function_call: Type.Optional(
      Type.Union([
        Type.Union([Type.Literal("none"), Type.Literal("auto")]),
        Type.Object({ name: Type.String() }, Open),
      ]),
    ),
    reasoning_effort: Nullable(
      Type.Union([Type.Literal("minimal"), Type.Literal("low"), Type.Literal("medium"), Type.Literal("high")]),
    ),
    // OpenAI's own settings: passed on unchanged to an OpenAI-wire upstream (see OPENAI_ONLY_FIELDS).
    store: Nullable(Type.Boolean()),
    metadata: Nullable(Type.Record(Type.String(), Type.String())),
    service_tier: Nullable(Type.String()),
    prediction: Nullable(Type.Object({ type: Type.Literal("content") }, Open)),
    web_search_options: Nullable(Type.Object({}, Open)),
    modalities: Nullable(Type.Array(Type.String())),
    response_format: Type.Optional(ResponseFormat),
    frequency_penalty: Nullable(Type.Number({ minimum: -2, maximum: 2 })),
    presence_penalty: Nullable(Type.Number({ minimum: -2, maximum: 2 })),
    logprobs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  Open,
);
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;
