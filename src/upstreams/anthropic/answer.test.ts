import { describe, expect, it } from "vitest";
import { AnthropicEventReader, answerFromAnthropic } from "./answer.js";

describe("Anthropic answers' extended thinking", () => {
  it("reads a message's thinking blocks as the choice's reasoning, before its text", () => {
    const answer = answerFromAnthropic(
      {
        id: "msg_1",
        model: "claude",
        content: [
          { type: "thinking", thinking: "6 times 7", signature: "sig" },
          { type: "text", text: "42" },
        ],
        stop_reason: "end_turn",
        usage: { input_tokens: 3, output_tokens: 9 },
      },
      "fallback",
    );
    expect(answer.choices[0]).toMatchObject({ text: "42", reasoning: "6 times 7" });
  });

  it("reads a stream's thinking deltas as reasoning events", () => {
    const reader = new AnthropicEventReader("fallback");
    const events = [
      {
        type: "message_start",
        message: { id: "msg_1", model: "claude", usage: { input_tokens: 3, output_tokens: 1 } },
      },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "6 times " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "7" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "42" } },
    ].flatMap((e) => reader.read(e));
    expect(events.filter((e) => e.type === "reasoning" || e.type === "text")).toEqual([
      { type: "reasoning", choice: 0, text: "6 times " },
      { type: "reasoning", choice: 0, text: "7" },
      { type: "text", choice: 0, text: "42" },
    ]);
  });
});
