import { Type } from "@sinclair/typebox";

// The answers of the Anthropic surface, for the API document. The gateway writes a message as
// JSON text itself (or its SSE events), so these schemas describe and never reshape.

const Open = { additionalProperties: true } as const;

export const MessageObject = Type.Object(
  {
    id: Type.String({ examples: ["msg_0f6c2a"] }),
    type: Type.Literal("message"),
    role: Type.Literal("assistant"),
    model: Type.String({ description: "the model the client asked for" }),
    content: Type.Array(
      Type.Object(
        { type: Type.String({ examples: ["thinking", "text", "tool_use"] }) },
        {
          ...Open,
          description:
            "a `thinking` block (the model's reasoning, where the upstream shows it), a `text` block, or a `tool_use` block with `id`, `name` and `input`",
        },
      ),
    ),
    stop_reason: Type.String({ examples: ["end_turn", "max_tokens", "stop_sequence", "tool_use"] }),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object(
      {
        input_tokens: Type.Integer(),
        output_tokens: Type.Integer(),
        cache_read_input_tokens: Type.Integer(),
        cache_creation_input_tokens: Type.Integer(),
        cache_creation: Type.Object(
          { ephemeral_5m_input_tokens: Type.Integer(), ephemeral_1h_input_tokens: Type.Integer() },
          Open,
        ),
      },
      Open,
    ),
  },
  Open,
);

/** The 200 answer of `POST /v1/messages`: one message, or its stream of events. */
export const MessageAnswer = {
  description: "The message",
  content: {
    "application/json": { schema: MessageObject },
    "text/event-stream": {
      schema: Type.String({
        description:
          "stream: true: Anthropic's events (`message_start`, `content_block_start`, `content_block_delta`, " +
          "`content_block_stop`, `message_delta`, `message_stop`); an error after the first event is an " +
          "`error` event holding an Anthropic error body",
      }),
    },
  },
};

export const CountTokensAnswer = Type.Object(
  { input_tokens: Type.Integer({ minimum: 0 }) },
  {
    ...Open,
    description:
      "The input's token count: the upstream's, or the gateway's estimate when the header x-gateway-token-count says estimated",
  },
);
