import type { ChatMessage, ChatPart, ChatRequest, ChatToolCall } from "../../core/chat/canonical.js";
import { GatewayError } from "../../core/errors.js";
import { parseImageReference } from "../../core/images/image-input.js";
import type { CountTokensBody, MessagesBody } from "./schemas.js";

type Block = Record<string, any>;

function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `${field} ${message}`, { param: field });
}

function imagePart(block: Block, at: string, maxImageBytes: number): ChatPart {
  const source = block.source ?? {};
  if (source.type === "base64") {
    if (typeof source.media_type !== "string" || typeof source.data !== "string") {
      throw invalid(`${at}.source`, "needs media_type and data");
    }
    const ref = parseImageReference(
      `${at}.source.data`,
      `data:${source.media_type};base64,${source.data}`,
      maxImageBytes,
    );
    if (ref.kind !== "inline") throw invalid(`${at}.source.data`, "is not base64 image data");
    return {
      type: "image",
      source: { kind: "inline", image: { mimeType: ref.image.mimeType, data: ref.image.bytes.toString("base64") } },
      field: `${at}.source.data`,
    };
  }
  if (source.type === "url" && typeof source.url === "string") {
    const ref = parseImageReference(`${at}.source.url`, source.url, maxImageBytes);
    return ref.kind === "url"
      ? { type: "image", source: { kind: "url", url: ref.url }, field: `${at}.source.url` }
      : {
          type: "image",
          source: { kind: "inline", image: { mimeType: ref.image.mimeType, data: ref.image.bytes.toString("base64") } },
          field: `${at}.source.url`,
        };
  }
  throw invalid(`${at}.source.type`, 'must be "base64" or "url"');
}

function textBlock(block: Block, at: string): ChatPart {
  if (typeof block.text !== "string") throw invalid(`${at}.text`, "must be a string");
  return { type: "text", text: block.text };
}

/** Text and image blocks (the content of a user turn or of a tool result). */
function parts(content: string | Block[], field: string, maxImageBytes: number): ChatPart[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content.map((block, i) => {
    const at = `${field}[${i}]`;
    if (block.type === "text") return textBlock(block, at);
    if (block.type === "image") return imagePart(block, at, maxImageBytes);
    throw invalid(`${at}.type`, `"${String(block.type)}" is not supported here`);
  });
}

/** One Anthropic turn as canonical messages: tool results come first, as tool messages. */
function turn(m: MessagesBody["messages"][number], i: number, maxImageBytes: number): ChatMessage[] {
  const field = `messages[${i}].content`;
  const blocks: Block[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  if (m.role === "assistant") {
    const text: ChatPart[] = [];
    const toolCalls: ChatToolCall[] = [];
    blocks.forEach((block, j) => {
      const at = `${field}[${j}]`;
      if (block.type === "text") text.push(textBlock(block, at));
      else if (block.type === "tool_use") {
        if (typeof block.id !== "string" || typeof block.name !== "string") throw invalid(at, "needs id and name");
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      } else if (block.type !== "thinking" && block.type !== "redacted_thinking") {
        throw invalid(`${at}.type`, `"${String(block.type)}" is not supported in an assistant turn`);
      }
    });
    return [{ role: "assistant", parts: text, toolCalls }];
  }
  const out: ChatMessage[] = [];
  const rest: Block[] = [];
  blocks.forEach((block, j) => {
    const at = `${field}[${j}]`;
    if (block.type !== "tool_result") {
      rest.push(block);
      return;
    }
    if (typeof block.tool_use_id !== "string") throw invalid(`${at}.tool_use_id`, "is required");
    out.push({
      role: "tool",
      toolCallId: block.tool_use_id,
      parts: block.content === undefined ? [] : parts(block.content, `${at}.content`, maxImageBytes),
      ...(block.is_error === true ? { isError: true } : {}),
    });
  });
  if (rest.length > 0) {
    const offset = blocks.length - rest.length;
    const userParts = rest.map((block, j) => {
      const at = `${field}[${offset + j}]`;
      if (block.type === "text") return textBlock(block, at);
      if (block.type === "image") return imagePart(block, at, maxImageBytes);
      throw invalid(`${at}.type`, `"${String(block.type)}" is not supported in a user turn`);
    });
    out.push({ role: "user", parts: userParts });
  }
  return out;
}

function systemText(system: CountTokensBody["system"]): string[] {
  if (system === undefined) return [];
  if (typeof system === "string") return system === "" ? [] : [system];
  return system.map((block: Block, i) => {
    if (block.type !== "text" || typeof block.text !== "string") throw invalid(`system[${i}]`, "must be a text block");
    return block.text as string;
  });
}

/** A validated Messages body in canonical form; bad content is a 400 naming the field. */
export function chatRequestFromAnthropic(body: MessagesBody | CountTokensBody, maxImageBytes: number): ChatRequest {
  if (body.thinking && body.thinking.type !== "disabled") {
    throw invalid("thinking", "is not supported by this gateway");
  }
  const full = body as Partial<MessagesBody>;
  if (full.top_k !== undefined) throw invalid("top_k", "is not supported by this gateway");
  const choice = body.tool_choice;
  if (choice?.type === "tool" && !choice.name)
    throw invalid("tool_choice.name", "is required for a tool choice of type tool");
  const fieldNames: Record<string, string> = {};
  if (full.metadata?.user_id) fieldNames.user = "metadata.user_id";
  return {
    system: systemText(body.system),
    messages: body.messages.flatMap((m, i) => turn(m, i, maxImageBytes)),
    tools: (body.tools ?? []).map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      parameters: t.input_schema as Record<string, unknown>,
    })),
    toolChoice: !choice
      ? null
      : choice.type === "any"
        ? { kind: "required" }
        : choice.type === "tool"
          ? { kind: "tool", name: choice.name as string }
          : { kind: choice.type },
    maxOutputTokens: full.max_tokens ?? null,
    temperature: full.temperature ?? null,
    topP: full.top_p ?? null,
    stop: full.stop_sequences ?? [],
    n: 1,
    seed: null,
    user: full.metadata?.user_id ?? null,
    responseFormat: { type: "text" },
    fieldNames,
  };
}
