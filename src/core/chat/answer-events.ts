import type { ChatAnswer, ChatEvent } from "./canonical.js";

/** A whole answer as the events of a stream that carried it. */
export async function* answerAsEvents(answer: ChatAnswer): AsyncGenerator<ChatEvent> {
  // The input side of the usage is known at the start, as a stream that reports it there has it.
  const usage = answer.usage ? { ...answer.usage, output: 0, reasoning: 0, audioOutput: 0 } : undefined;
  yield { type: "start", id: answer.id, model: answer.model, ...(usage ? { usage } : {}) };
  for (const choice of answer.choices) {
    if (choice.reasoning) yield { type: "reasoning", choice: choice.index, text: choice.reasoning };
    if (choice.text !== "") yield { type: "text", choice: choice.index, text: choice.text };
    for (const [index, call] of choice.toolCalls.entries()) {
      yield { type: "tool_call_start", choice: choice.index, index, id: call.id, name: call.name };
      if (call.arguments !== "")
        yield { type: "tool_call_delta", choice: choice.index, index, arguments: call.arguments };
    }
    yield {
      type: "finish",
      choice: choice.index,
      reason: choice.finishReason,
      stopSequence: choice.stopSequence ?? null,
    };
  }
  if (answer.usage) yield { type: "usage", usage: answer.usage };
}
