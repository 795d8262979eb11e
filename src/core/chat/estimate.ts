import { estimateTextTokens } from "../metering/token-settlement.js";
import { type TokenUsage, tokenUsage } from "../token-usage.js";
import type { ChatMessage, ChatPart, ChatReasoningEffort, ChatRequest } from "./canonical.js";

/**
 * Input tokens one image may cost at most on any upstream (Gemini bills 258, Anthropic about
 * 1,600 for its largest size, OpenAI's patch-based models up to about 2,500).
 */
export const IMAGE_TOKEN_BOUND = 3000;

function partBytes(part: ChatPart): { bytes: number; chars: number; images: number } {
  if (part.type === "text") return { bytes: Buffer.byteLength(part.text, "utf8"), chars: part.text.length, images: 0 };
  return { bytes: 0, chars: 0, images: 1 };
}

function messageText(message: ChatMessage): ChatPart[] {
  const parts = [...message.parts];
  if (message.role === "assistant") {
    for (const call of message.toolCalls) parts.push({ type: "text", text: `${call.id}${call.name}${call.arguments}` });
  }
  if (message.role === "tool") parts.push({ type: "text", text: message.toolCallId });
  return parts;
}

/** Text bytes, characters and images of everything the request sends as input. */
function inputSize(request: ChatRequest) {
  let bytes = 0;
  let chars = 0;
  let images = 0;
  const texts: ChatPart[] = request.system.map((text) => ({ type: "text", text }));
  for (const message of request.messages) texts.push(...messageText(message));
  const toolsJson = request.tools.length > 0 ? JSON.stringify(request.tools) : "";
  texts.push({ type: "text", text: toolsJson });
  if (request.responseFormat.type === "json_schema") {
    texts.push({ type: "text", text: JSON.stringify(request.responseFormat.schema) });
  }
  for (const part of texts) {
    const size = partBytes(part);
    bytes += size.bytes;
    chars += size.chars;
    images += size.images;
  }
  return { bytes, chars, images };
}

/**
 * The most input tokens the request can cost: no tokenizer makes more than one token of a
 * byte, so every byte of the messages, system text and tools counts as one token, plus a bound
 * per image. Messages wrapped by the upstream's chat template cost a few tokens more each.
 */
export function inputTokenBound(request: ChatRequest): number {
  const size = inputSize(request);
  return size.bytes + size.images * IMAGE_TOKEN_BOUND + 8 * (request.messages.length + request.system.length);
}

/** A likely input size (four characters a token), for answers whose upstream reports no usage. */
export function inputTokenEstimate(request: ChatRequest): number {
  const size = inputSize(request);
  return estimateTextTokens(size.chars) + size.images * 258;
}

/**
 * The thinking budget an upstream that thinks on a budget is given for each reasoning effort
 * (Google's mapping of OpenAI's words; 1024 is Anthropic's least budget, so `minimal` is 1024
 * there and off on Gemini). Such an upstream bills the thinking as output on top of the answer's
 * own limit, so the hold counts it too.
 */
export const THINKING_BUDGET: Record<ChatReasoningEffort, number> = {
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24576,
};

/**
 * The usage held before the call: the input bound and the most output the request allows, its
 * thinking budget included when it asks for a reasoning effort.
 */
export function holdUsage(request: ChatRequest, modelMaxOutputTokens: number): TokenUsage {
  const thinking = request.reasoningEffort ? THINKING_BUDGET[request.reasoningEffort] : 0;
  const perChoice = (request.maxOutputTokens ?? modelMaxOutputTokens) + thinking;
  return tokenUsage({ input: inputTokenBound(request), output: perChoice * request.n });
}
