import { answerChangingOpenAiField, type ChatMessage, type ChatRequest, type ChatToolCall } from "./canonical.js";
import type { Untranslatable } from "./ports.js";

/** The wire names of the sampling settings an upstream takes, each under its own spelling. */
export interface SamplingNames {
  maxOutputTokens: string;
  temperature: string;
  topP: string;
  stop: string;
  n: string;
  seed: string;
  /** Where the upstream has them; an upstream without refuses them (its `untranslatable`). */
  frequencyPenalty?: string;
  presencePenalty?: string;
}

/**
 * Puts on `target` each sampling setting the client set, under the upstream's name: a setting the
 * client left out stays out, so that the upstream's own default applies (n is left out at 1).
 */
export function putSampling(target: Record<string, unknown>, request: ChatRequest, names: SamplingNames): void {
  if (request.maxOutputTokens !== null) target[names.maxOutputTokens] = request.maxOutputTokens;
  if (request.temperature !== null) target[names.temperature] = request.temperature;
  if (request.topP !== null) target[names.topP] = request.topP;
  if (request.stop.length > 0) target[names.stop] = request.stop;
  if (request.n !== 1) target[names.n] = request.n;
  if (request.seed !== null) target[names.seed] = request.seed;
  if (names.frequencyPenalty && request.frequencyPenalty !== undefined)
    target[names.frequencyPenalty] = request.frequencyPenalty;
  if (names.presencePenalty && request.presencePenalty !== undefined)
    target[names.presencePenalty] = request.presencePenalty;
}

/** The refusal of an upstream that has no penalties, for a request that sets one other than 0. */
export function penaltyRefusal(request: ChatRequest, vendor: string): Untranslatable | null {
  if (request.frequencyPenalty) return { field: "frequency_penalty", reason: `${vendor} models take no penalties` };
  if (request.presencePenalty) return { field: "presence_penalty", reason: `${vendor} models take no penalties` };
  return null;
}

/** A tool call's arguments as an object: upstreams that take them parsed read "" as no arguments. */
export function parsedArguments(call: ChatToolCall): unknown {
  return call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
}

/** An assistant turn's parts an upstream is sent: an empty text part says nothing and is left out. */
export function spokenParts(message: Extract<ChatMessage, { role: "assistant" }>) {
  return message.parts.filter((p) => p.type !== "text" || p.text !== "");
}

/**
 * The refusal of an upstream that takes none of OpenAI's own settings (`vendor` names it in the
 * reason): the first of them that changes the answer; `store` and `metadata` are left out.
 */
export function openAiOnlyRefusal(request: ChatRequest, vendor: string): Untranslatable | null {
  const field = answerChangingOpenAiField(request);
  return field ? { field, reason: `${vendor} has no such setting; it is OpenAI's own` } : null;
}

/**
 * The refusal of an upstream with no setting that keeps a model to one tool call per turn, for a
 * request that asks for that (`parallel_tool_calls: false`); asking for several is its default.
 */
export function serialToolCallsRefusal(request: ChatRequest, vendor: string): Untranslatable | null {
  if (request.parallelToolCalls !== false) return null;
  const field = request.fieldNames.parallelToolCalls ?? "parallel_tool_calls";
  return { field, reason: `${vendor} has no setting that keeps a model to one tool call per turn` };
}
