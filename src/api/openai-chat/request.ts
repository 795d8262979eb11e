import type {
  ChatMessage,
  ChatPart,
  ChatRequest,
  ChatResponseFormat,
  ChatToolChoice,
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

function message(m: WireMessage, i: number, maxImageBytes: number, system: string[]): ChatMessage | null {
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
        toolCalls: (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        })),
      };
    case "tool":
      if (!m.tool_call_id) throw invalid(`${field}.tool_call_id`, "is required for a tool message");
      return {
        role: "tool",
        toolCallId: m.tool_call_id,
        parts: partsOf(m.content, `${field}.content`, false, maxImageBytes),
      };
    default:
      throw invalid(`${field}.role`, `"${m.role}" is not one of system, developer, user, assistant, tool`);
  }
}

function toolChoice(choice: ChatCompletionBody["tool_choice"]): ChatToolChoice | null {
  if (choice === undefined) return null;
  if (typeof choice === "string") return { kind: choice };
  return { kind: "tool", name: choice.function.name };
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
  for (const field of ["frequency_penalty", "presence_penalty"] as const) {
    const value = body[field];
    if (typeof value === "number" && value !== 0) throw invalid(field, "is not supported by this gateway");
  }
  if (body.logprobs === true) throw invalid("logprobs", "is not supported by this gateway");
}

/** A validated Chat Completions body in canonical form; bad content is a 400 naming the field. */
export function chatRequestFromOpenAi(body: ChatCompletionBody, maxImageBytes: number): ChatRequest {
  refuseUncarried(body);
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  body.messages.forEach((m, i) => {
    const converted = message(m, i, maxImageBytes, system);
    if (converted) messages.push(converted);
  });
  if (messages.length === 0) throw invalid("messages", "must hold at least one user, assistant or tool message");
  const fieldNames: Record<string, string> = {};
  const n = body.n ?? 1;
  if (n !== 1) fieldNames.n = "n";
  if (body.seed !== undefined && body.seed !== null) fieldNames.seed = "seed";
  if (body.response_format && body.response_format.type !== "text") fieldNames.responseFormat = "response_format";
  if (body.user !== undefined) fieldNames.user = "user";
  return {
    system,
    messages,
    tools: (body.tools ?? []).map((t) => ({
      name: t.function.name,
      ...(t.function.description ? { description: t.function.description } : {}),
      parameters: (t.function.parameters ?? { type: "object", properties: {} }) as Record<string, unknown>,
    })),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    stop: body.stop === undefined || body.stop === null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
    n,
    seed: body.seed ?? null,
    user: body.user ?? null,
    responseFormat: responseFormat(body.response_format),
    fieldNames,
  };
}
