import type { ChatAnswer, ChatFinishReason } from "../../core/chat/canonical.js";
import { cacheWriteTokensOf, outputTokensOf, type TokenUsage, tokenUsage } from "../../core/token-usage.js";

const STOP_REASON: Record<ChatFinishReason, string> = {
  stop: "end_turn",
  stop_sequence: "stop_sequence",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
};

export function anthropicStopReason(reason: ChatFinishReason): string {
  return STOP_REASON[reason];
}

/**
 * Usage in Anthropic's terms: its `input_tokens` leave out what was read from or written to a
 * cache (reported on their own, the writes by duration in `cache_creation`); its `output_tokens`
 * hold all output, thinking included.
 */
export function anthropicUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.input + usage.audioInput,
    cache_creation_input_tokens: cacheWriteTokensOf(usage),
    cache_read_input_tokens: usage.cacheRead,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheWrite5m,
      ephemeral_1h_input_tokens: usage.cacheWrite1h,
    },
    output_tokens: outputTokensOf(usage),
  };
}

/** A tool call's JSON arguments as the object `tool_use.input` is (an empty object if they are not JSON). */
export function toolInput(args: string): unknown {
  try {
    return args.trim() === "" ? {} : JSON.parse(args);
  } catch {
    return {};
  }
}

/** A canonical answer as a Messages `message`, under the model name the client asked for. */
export function anthropicMessage(answer: ChatAnswer, id: string, model: string) {
  const choice = answer.choices[0];
  const content: unknown[] = [];
  // The reasoning as a thinking block; the upstream signs none (a client sending it back has it dropped).
  if (choice?.reasoning) content.push({ type: "thinking", thinking: choice.reasoning, signature: "" });
  if (choice?.text) content.push({ type: "text", text: choice.text });
  for (const call of choice?.toolCalls ?? []) {
    content.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
  }
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: anthropicStopReason(choice?.finishReason ?? "stop"),
    stop_sequence: choice?.stopSequence ?? null,
    usage: anthropicUsage(answer.usage ?? tokenUsage({})),
  };
}
