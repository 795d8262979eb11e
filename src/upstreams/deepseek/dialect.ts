import type { ChatAnswer, ChatEvent, ChatRequest } from "../../core/chat/canonical.js";
import type { Untranslatable } from "../../core/chat/ports.js";
import { openAiOnlyRefusal, serialToolCallsRefusal } from "../../core/chat/wire-helpers.js";
import { answerFromWire, OpenAiChunkReader } from "../openai-chat/answer.js";
import type { OpenAiChatDialect } from "../openai-chat/index.js";

/**
 * DeepSeek's Chat Completions: OpenAI's wire, with the model's reasoning (deepseek-reasoner) in
 * `reasoning_content` beside `content`, in a message and in a stream's deltas, and cached input in
 * `prompt_cache_hit_tokens` (which the OpenAI reader already takes). Reasoning tokens are part of
 * `completion_tokens` and counted in `completion_tokens_details.reasoning_tokens`.
 */

/** A message's or a delta's `reasoning_content`: a string, or null once the answer proper begins. */
function reasoningOf(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A `chat.completion` answer, each choice with its reasoning. */
export function deepSeekAnswer(body: unknown, fallbackModel: string): ChatAnswer {
  const answer = answerFromWire(body, fallbackModel);
  const wire: unknown[] = Array.isArray((body as { choices?: unknown })?.choices)
    ? (body as { choices: unknown[] }).choices
    : [];
  for (const [i, choice] of answer.choices.entries()) {
    const reasoning = reasoningOf(
      (wire[i] as { message?: { reasoning_content?: unknown } })?.message?.reasoning_content,
    );
    if (reasoning !== "") choice.reasoning = reasoning;
  }
  return answer;
}

/** A stream's chunks: the OpenAI reader's events, a choice's reasoning pieces before its text. */
export class DeepSeekChunkReader {
  private readonly openAi: OpenAiChunkReader;

  constructor(fallbackModel: string) {
    this.openAi = new OpenAiChunkReader(fallbackModel);
  }

  read(chunk: unknown): ChatEvent[] {
    const events = this.openAi.read(chunk);
    const choices = (chunk as { choices?: unknown })?.choices;
    if (!Array.isArray(choices)) return events;
    const reasoning: ChatEvent[] = [];
    for (const choice of choices) {
      const text = reasoningOf(choice?.delta?.reasoning_content);
      if (text !== "")
        reasoning.push({ type: "reasoning", choice: typeof choice.index === "number" ? choice.index : 0, text });
    }
    if (reasoning.length > 0) events.splice(events[0]?.type === "start" ? 1 : 0, 0, ...reasoning);
    return events;
  }
}

/**
 * What DeepSeek cannot carry: more than one choice, a JSON schema (it takes `json_object` only),
 * and OpenAI's own settings that change the answer (it would ignore them).
 */
export function deepSeekUntranslatable(request: ChatRequest): Untranslatable | null {
  if (request.n !== 1) return { field: request.fieldNames.n ?? "n", reason: "DeepSeek answers one choice per request" };
  if (request.reasoningEffort) {
    return {
      field: request.fieldNames.reasoningEffort ?? "reasoning_effort",
      reason: "DeepSeek takes no reasoning effort; deepseek-reasoner always reasons, deepseek-chat never",
    };
  }
  const openAiOnly = serialToolCallsRefusal(request, "DeepSeek") ?? openAiOnlyRefusal(request, "DeepSeek");
  if (openAiOnly) return openAiOnly;
  if (request.responseFormat.type === "json_schema") {
    return {
      field: request.fieldNames.responseFormat ?? "response_format",
      reason: 'DeepSeek takes {"type": "json_object"} and no JSON schema; describe the JSON wanted in the prompt',
    };
  }
  return null;
}

export const DEEPSEEK_DIALECT: OpenAiChatDialect = {
  openAiFields: false,
  untranslatable: deepSeekUntranslatable,
  readAnswer: deepSeekAnswer,
  chunkReader: (model) => new DeepSeekChunkReader(model),
};
