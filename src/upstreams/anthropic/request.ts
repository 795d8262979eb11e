import type { ChatMessage, ChatPart, ChatRequest, ChatToolChoice } from "../../core/chat/canonical.js";
import { THINKING_BUDGET } from "../../core/chat/estimate.js";
import type { Untranslatable } from "../../core/chat/ports.js";
import { openAiOnlyRefusal, parsedArguments, penaltyRefusal, spokenParts } from "../../core/chat/wire-helpers.js";

/** Output limit sent when the request sets none (the Messages API requires one). */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
type WireMessage = { role: "user" | "assistant"; content: Block[] };

function block(part: ChatPart): Block {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.source.kind === "url") return { type: "image", source: { type: "url", url: part.source.url } };
  return {
    type: "image",
    source: { type: "base64", media_type: part.source.image.mimeType, data: part.source.image.data },
  };
}

/** A tool call's arguments as the object Anthropic's `tool_use.input` is. */
function blocksOf(message: ChatMessage): WireMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.parts.map(block) };
    case "assistant":
      return {
        role: "assistant",
        content: [
          ...spokenParts(message).map(block),
          ...message.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: parsedArguments(c) })),
        ],
      };
    case "tool":
      return {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            content: message.parts.map(block),
            ...(message.isError ? { is_error: true } : {}),
          },
        ],
      };
  }
}

/** Turns in the Messages API alternate: consecutive turns of one role become one. */
function merged(messages: WireMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content.push(...m.content);
    else out.push({ role: m.role, content: [...m.content] });
  }
  return out;
}

function wireToolChoice(choice: ChatToolChoice): Block {
  if (choice.kind === "required") return { type: "any" };
  if (choice.kind === "tool") return { type: "tool", name: choice.name };
  return { type: choice.kind };
}

/**
 * The tool a response format becomes on the Messages API, which has no response format: the model
 * is made to call it, and its input is the answer's JSON (what the client libraries themselves do
 * for structured output on Anthropic). Null for plain text.
 */
export function structuredOutputTool(request: ChatRequest): { name: string; schema: Record<string, unknown> } | null {
  const format = request.responseFormat;
  if (format.type === "json_object") return { name: "json_answer", schema: { type: "object" } };
  if (format.type === "json_schema") return { name: format.name, schema: format.schema };
  return null;
}

/** Why a response format cannot go as a forced tool, or null when it can. */
function structuredOutputConflict(request: ChatRequest): Untranslatable | null {
  const tool = structuredOutputTool(request);
  if (!tool) return null;
  const field = request.fieldNames.responseFormat ?? "response_format";
  if (request.tools.length > 0 && request.toolChoice?.kind !== "none")
    return {
      field,
      reason: "Anthropic models give structured output through a tool: it cannot be combined with tools",
    };
  if (request.reasoningEffort)
    return { field, reason: "Anthropic models give structured output through a forced tool, which excludes thinking" };
  if (tool.schema.type !== "object")
    return {
      field,
      reason: "Anthropic models give structured output as a JSON object: the schema's type must be object",
    };
  return null;
}

/** What extended thinking cannot be combined with (Anthropic refuses it). */
function thinkingConflict(request: ChatRequest): Untranslatable | null {
  const field = request.fieldNames.reasoningEffort ?? "reasoning_effort";
  if (request.temperature !== null && request.temperature !== 1)
    return { field, reason: "Anthropic models think only at the default temperature; leave temperature out" };
  if (request.topP !== null && request.topP < 0.95)
    return { field, reason: "Anthropic models think only with top_p at 0.95 or above" };
  if (request.toolChoice?.kind === "required" || request.toolChoice?.kind === "tool")
    return { field, reason: "Anthropic models think only when the tool choice is auto or none" };
  return null;
}

/**
 * What the Messages API cannot carry: several choices, a seed, a response format beside tools or
 * thinking, OpenAI's own settings that change the answer, and thinking with what it excludes.
 */
export function anthropicUntranslatable(request: ChatRequest): Untranslatable | null {
  if (request.n !== 1)
    return { field: request.fieldNames.n ?? "n", reason: "Anthropic models answer one choice per request" };
  if (request.seed !== null)
    return { field: request.fieldNames.seed ?? "seed", reason: "Anthropic models take no seed" };
  const penalty = penaltyRefusal(request, "Anthropic");
  if (penalty) return penalty;
  const structured = structuredOutputConflict(request);
  if (structured) return structured;
  if (request.reasoningEffort) {
    const conflict = thinkingConflict(request);
    if (conflict) return conflict;
  }
  const openAiOnly = openAiOnlyRefusal(request, "Anthropic");
  if (openAiOnly) return openAiOnly;
  for (const [i, m] of request.messages.entries()) {
    if (m.role !== "assistant") continue;
    for (const call of m.toolCalls) {
      try {
        parsedArguments(call);
      } catch {
        return { field: `messages[${i}].tool_calls`, reason: `the arguments of tool call "${call.id}" are not JSON` };
      }
    }
  }
  return null;
}

/** The body of `POST /v1/messages` for a canonical request. */
export function anthropicBody(request: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const limit = request.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
  const budget = request.reasoningEffort ? THINKING_BUDGET[request.reasoningEffort] : 0;
  const body: Record<string, unknown> = {
    model,
    // Thinking counts in max_tokens, which must exceed its budget: the answer keeps its own limit on top.
    max_tokens: budget + limit,
    messages: merged(request.messages.map(blocksOf)),
  };
  if (request.system.length > 0) body.system = request.system.join("\n\n");
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.parameters,
    }));
  }
  if (request.toolChoice) body.tool_choice = wireToolChoice(request.toolChoice);
  const structured = structuredOutputTool(request);
  if (structured) {
    body.tools = [{ name: structured.name, description: "Answer with this.", input_schema: structured.schema }];
    body.tool_choice = { type: "tool", name: structured.name };
  }
  if (request.parallelToolCalls === false && request.tools.length > 0 && request.toolChoice?.kind !== "none") {
    body.tool_choice = {
      ...((body.tool_choice as Block | undefined) ?? { type: "auto" }),
      disable_parallel_tool_use: true,
    };
  }
  if (budget > 0) body.thinking = { type: "enabled", budget_tokens: budget };
  if (request.temperature !== null) body.temperature = Math.min(1, request.temperature);
  if (request.topP !== null) body.top_p = request.topP;
  if (request.stop.length > 0) body.stop_sequences = request.stop;
  if (request.user !== null) body.metadata = { user_id: request.user };
  if (stream) body.stream = true;
  return body;
}
