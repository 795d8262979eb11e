import type { ChatAnswer, ChatFinishReason, ChatToolCall } from "../../core/chat/canonical.js";
import { outputTokensOf, promptTokensOf, type TokenUsage } from "../../core/token-usage.js";

/** OpenAI's finish reason: a stop string ends a choice as `stop` there. */
export function openAiFinish(reason: ChatFinishReason): string {
  return reason === "stop_sequence" ? "stop" : reason;
}

/** Usage in OpenAI's terms: the totals include their details (cached and audio prompt, reasoning and audio output). */
export function openAiUsage(usage: TokenUsage) {
  const prompt = promptTokensOf(usage);
  const completion = outputTokensOf(usage);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: usage.audioInput },
    completion_tokens_details: { reasoning_tokens: usage.reasoning, audio_tokens: usage.audioOutput },
  };
}

/**
 * A choice's tool calls as its message holds them. `legacy` (the request gave `functions`): the
 * first call is `function_call`, as the legacy form answers; any further calls (the legacy form
 * has no room for them) stay in `tool_calls` rather than being lost.
 */
function messageCalls(calls: ChatToolCall[], legacy: boolean): Record<string, unknown> {
  const wire = (from: number) =>
    calls.slice(from).map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } }));
  const first = calls[0];
  if (!first) return {};
  if (!legacy) return { tool_calls: wire(0) };
  return {
    function_call: { name: first.name, arguments: first.arguments },
    ...(calls.length > 1 ? { tool_calls: wire(1) } : {}),
  };
}

/** The finish reason of a choice: a call in the legacy form ends it as `function_call`. */
export function openAiChoiceFinish(reason: ChatFinishReason, legacy: boolean): string {
  return legacy && reason === "tool_calls" ? "function_call" : openAiFinish(reason);
}

/**
 * A canonical answer as a `chat.completion` object, under the model name the client asked for;
 * `legacy`: tool calls in the legacy `function_call` form.
 */
export function chatCompletion(answer: ChatAnswer, id: string, model: string, created: number, legacy = false) {
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
        ...messageCalls(c.toolCalls, legacy),
      },
      logprobs: null,
      finish_reason: openAiChoiceFinish(c.finishReason, legacy),
    })),
    usage: answer.usage ? openAiUsage(answer.usage) : null,
  };
}
