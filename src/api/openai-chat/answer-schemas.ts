import { Type } from "@sinclair/typebox";

// The answers of the OpenAI chat surface, for the API document. The gateway writes them as JSON
// text itself (a `chat.completion`, or SSE chunks), so these schemas describe and never reshape.

const Open = { additionalProperties: true } as const;

const Usage = Type.Object(
  {
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    prompt_tokens_details: Type.Optional(
      Type.Object({ cached_tokens: Type.Integer(), audio_tokens: Type.Integer() }, Open),
    ),
    completion_tokens_details: Type.Optional(
      Type.Object({ reasoning_tokens: Type.Integer(), audio_tokens: Type.Integer() }, Open),
    ),
  },
  Open,
);

const ToolCall = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal("function"),
    function: Type.Object({ name: Type.String(), arguments: Type.String() }, Open),
  },
  Open,
);

export const ChatCompletionObject = Type.Object(
  {
    id: Type.String({ examples: ["chatcmpl-0f6c2a"] }),
    object: Type.Literal("chat.completion"),
    created: Type.Integer({ description: "Unix seconds" }),
    model: Type.String({ description: "the model the client asked for" }),
    choices: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          message: Type.Object(
            {
              role: Type.Literal("assistant"),
              content: Type.Union([Type.String(), Type.Null()]),
              reasoning_content: Type.Optional(
                Type.String({ description: "the model's reasoning, where the upstream shows it" }),
              ),
              refusal: Type.Null(),
              tool_calls: Type.Optional(Type.Array(ToolCall)),
            },
            Open,
          ),
          logprobs: Type.Null(),
          finish_reason: Type.String({ examples: ["stop", "length", "tool_calls"] }),
        },
        Open,
      ),
    ),
    usage: Type.Union([Usage, Type.Null()]),
  },
  Open,
);

/** The 200 answer of `POST /v1/chat/completions`: one object, or a stream of chunks. */
export const ChatCompletionAnswer = {
  description: "The completion",
  content: {
    "application/json": { schema: ChatCompletionObject },
    "text/event-stream": {
      schema: Type.String({
        description:
          "stream: true: one `data: <chat.completion.chunk JSON>` event per chunk, then `data: [DONE]`; " +
          "an error after the first event is an event holding an OpenAI error body",
      }),
    },
  },
};
