import type { ChatAnswer, ChatFinishReason, ChatUsage } from "../../core/chat/canonical.js";

/** OpenAI's finish reason: a stop string ends a choice as `stop` there. */
export function openAiFinish(reason: ChatFinishReason): string {
  return reason === "stop_sequence" ? "stop" : reason;
}

export function openAiUsage(usage: ChatUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** A canonical answer as a `chat.completion` object, under the model name the client asked for. */
export function chatCompletion(answer: ChatAnswer, id: string, model: string, created: number) {
  return {
    id,
    object: "chat.completion",
    created,
    model,
    choices: answer.choices.map((c) => ({
      index: c.index,
      message: {
        role: "assistant",
        content: c.text === "" && c.toolCalls.length > 0 ? null : c.text,
        // The reasoning, under the name DeepSeek's API and the clients of reasoning models read.
        ...(c.reasoning ? { reasoning_content: c.reasoning } : {}),
        refusal: null,
        ...(c.toolCalls.length > 0
          ? {
              tool_calls: c.toolCalls.map((t) => ({
                id: t.id,
                type: "function",
                function: { name: t.name, arguments: t.arguments },
              })),
            }
          : {}),
      },
      logprobs: null,
      finish_reason: openAiFinish(c.finishReason),
    })),
    usage: answer.usage ? openAiUsage(answer.usage) : null,
  };
}
