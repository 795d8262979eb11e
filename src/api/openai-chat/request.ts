import {
  type ChatMessage,
  type ChatPart,
  type ChatRequest,
  type ChatResponseFormat,
  type ChatTool,
  type ChatToolCall,
  type ChatToolChoice,
  OPENAI_ONLY_FIELDS,
} from "../../core/chat/canonical.js";
import { GatewayError } from "../../core/errors.js";
import { parseImageReference } from "../../core/images/image-input.js";
import type { ChatCompletionBody } from "./schemas.js";

type WireMessage = ChatCompletionBody["messages"][number];

function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${field} ${message}`, { param: field });
}

/** The parts of a message's `content`: a string, or an array of text (and, for users, image) parts. */
function partsOf(content: WireMessage["content"], field: string, images: boolean, maxImageBytes: number): ChatPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content.map((part, i): ChatPart => {
    const at = `${field}[${i}]`;
    const p = part as Record<string, any>;
    if (p.type === "text") {
      if (typeof p.text !== "string") throw invalid(`${at}.text`, "must be a string");
      return { type: "text", text: p.text };
    }
    if (p.type === "image_url" && images) {
      const url = p.image_url?.url;
      if (typeof url !== "string") throw invalid(`${at}.image_url.url`, "must be a string");
      const ref = parseImageReference(`${at}.image_url.url`, url, maxImageBytes);
      const source =
        ref.kind === "url"
          ? ({ kind: "url", url: ref.url } as const)
          : ({
              kind: "inline",
              image: { mimeType: ref.image.mimeType, data: ref.image.bytes.toString("base64") },
            } as const);
      return { type: "image", source, field: `${at}.image_url.url` };
    }
    throw invalid(`${at}.type`, `"${String(p.type)}" is not supported in a ${images ? "user" : "non-user"} message`);
  });
}

/** The id given to the legacy `function_call` of assistant message `i` (it has none of its own). */
const legacyCallId = (i: number) => `call_function_${i}`;

/** The tool calls of an assistant message: `tool_calls`, or the legacy `function_call`. */
function assistantCalls(m: WireMessage, i: number): ChatToolCall[] {
  const calls = (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  if (m.function_call)
    calls.push({ id: legacyCallId(i), name: m.function_call.name, arguments: m.function_call.arguments });
  return calls;
}

/** The legacy `function` message answers the latest call of its function: that call's id. */
function legacyResultId(body: ChatCompletionBody, i: number, name: string | undefined): string {
  for (let j = i - 1; j >= 0; j--) {
    const call = body.messages[j]?.function_call;
    if (body.messages[j]?.role === "assistant" && call && call.name === name) return legacyCallId(j);
  }
  throw invalid(`messages[${i}].name`, "names no function called by an earlier assistant message");
}

function message(body: ChatCompletionBody, i: number, maxImageBytes: number, system: string[]): ChatMessage | null {
  const m = body.messages[i] as WireMessage;
  const field = `messages[${i}]`;
  switch (m.role) {
    case "system":
    case "developer": {
      const parts = partsOf(m.content, `${field}.content`, false, maxImageBytes);
      system.push(parts.map((p) => (p.type === "text" ? p.text : "")).join(""));
      return null;
    }
    case "user":
      return { role: "user", parts: partsOf(m.content, `${field}.content`, true, maxImageBytes) };
    case "assistant":
      return {
        role: "assistant",
        parts: partsOf(m.content, `${field}.content`, false, maxImageBytes),
        toolCalls: assistantCalls(m, i),
      };
    case "function":
      return {
        role: "tool",
        toolCallId: legacyResultId(body, i, m.name),
        parts: partsOf(m.content, `${field}.content`, false, maxImageBytes),
      };
    case "tool":
      if (!m.tool_call_id) throw invalid(`${field}.tool_call_id`, "is required for a tool message");
      return {
        role: "tool",
        toolCallId: m.tool_call_id,
        parts: partsOf(m.content, `${field}.content`, false, maxImageBytes),
      };
    default:
      throw invalid(`${field}.role`, `"${m.role}" is not one of system, developer, user, assistant, tool, function`);
  }
}

/** `tools`, or the legacy `functions` (one of them). */
function toolsOf(body: ChatCompletionBody): ChatTool[] {
  if (body.tools && body.functions) throw invalid("functions", "cannot be given with tools");
  const functions = body.functions ?? (body.tools ?? []).map((t) => t.function);
  return functions.map((f) => ({
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    parameters: (f.parameters ?? { type: "object", properties: {} }) as Record<string, unknown>,
  }));
}

/** `tool_choice`, or the legacy `function_call` (one of them). */
function toolChoice(body: ChatCompletionBody): ChatToolChoice | null {
  const choice = body.tool_choice;
  const legacy = body.function_call;
  if (choice !== undefined && legacy !== undefined) throw invalid("function_call", "cannot be given with tool_choice");
  if (legacy !== undefined) return typeof legacy === "string" ? { kind: legacy } : { kind: "tool", name: legacy.name };
  if (choice === undefined) return null;
  if (typeof choice === "string") return { kind: choice };
  return { kind: "tool", name: choice.function.name };
}

/** OpenAI's own settings the client gave (not null), by wire name. */
function openAiOnly(body: ChatCompletionBody): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(OPENAI_ONLY_FIELDS) as (keyof typeof OPENAI_ONLY_FIELDS)[]) {
    const value = body[name];
    if (value !== undefined && value !== null) out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The output limit under the names the client gave it. */
function outputLimits(body: ChatCompletionBody): ChatRequest["openAiOutputLimits"] {
  const limits: NonNullable<ChatRequest["openAiOutputLimits"]> = {};
  if (typeof body.max_tokens === "number") limits.max_tokens = body.max_tokens;
  if (typeof body.max_completion_tokens === "number") limits.max_completion_tokens = body.max_completion_tokens;
  return Object.keys(limits).length > 0 ? limits : undefined;
}

function responseFormat(format: ChatCompletionBody["response_format"]): ChatResponseFormat {
  if (!format || format.type === "text") return { type: "text" };
  if (format.type === "json_object") return { type: "json_object" };
  return {
    type: "json_schema",
    name: format.json_schema.name,
    schema: (format.json_schema.schema ?? {}) as Record<string, unknown>,
    strict: format.json_schema.strict === true,
  };
}

/** Refuses settings the gateway cannot carry to every upstream, rather than dropping them. */
function refuseUncarried(body: ChatCompletionBody): void {
  if (body.logprobs === true) throw invalid("logprobs", "is not supported by this gateway");
}

/** A validated Chat Completions body in canonical form; bad content is a 400 naming the field. */
export function chatRequestFromOpenAi(body: ChatCompletionBody, maxImageBytes: number): ChatRequest {
  refuseUncarried(body);
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  body.messages.forEach((_m, i) => {
    const converted = message(body, i, maxImageBytes, system);
    if (converted) messages.push(converted);
  });
  if (messages.length === 0) throw invalid("messages", "must hold at least one user, assistant or tool message");
  const fieldNames: Record<string, string> = {};
  const n = body.n ?? 1;
  if (n !== 1) fieldNames.n = "n";
  if (body.seed !== undefined && body.seed !== null) fieldNames.seed = "seed";
  if (body.response_format && body.response_format.type !== "text") fieldNames.responseFormat = "response_format";
  if (body.user !== undefined) fieldNames.user = "user";
  if (body.reasoning_effort) fieldNames.reasoningEffort = "reasoning_effort";
  if (body.parallel_tool_calls !== undefined) fieldNames.parallelToolCalls = "parallel_tool_calls";
  const only = openAiOnly(body);
  const limits = outputLimits(body);
  return {
    system,
    messages,
    tools: toolsOf(body),
    toolChoice: toolChoice(body),
    ...(body.reasoning_effort ? { reasoningEffort: body.reasoning_effort } : {}),
    ...(body.parallel_tool_calls !== undefined ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    ...(limits ? { openAiOutputLimits: limits } : {}),
    ...(only ? { openAiOnly: only } : {}),
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    stop: body.stop === undefined || body.stop === null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
    n,
    seed: body.seed ?? null,
    ...(typeof body.frequency_penalty === "number" ? { frequencyPenalty: body.frequency_penalty } : {}),
    ...(typeof body.presence_penalty === "number" ? { presencePenalty: body.presence_penalty } : {}),
    user: body.user ?? null,
    responseFormat: responseFormat(body.response_format),
    fieldNames,
  };
}
