import type { ReportedUsage } from "../token-usage.js";

/**
 * The gateway's one form of a chat: every client surface translates its request into a
 * `ChatRequest` and renders a `ChatAnswer` or a stream of `ChatEvent`s; every upstream adapter
 * translates them to and from its wire. No surface knows an upstream and no upstream a surface.
 */

/** An image the upstream receives inline (URLs are fetched by the gateway first). */
export interface ChatImage {
  mimeType: string;
  /** Base64 of the bytes. */
  data: string;
}

export type ChatImageSource = { kind: "inline"; image: ChatImage } | { kind: "url"; url: string };

export type ChatPart = { type: "text"; text: string } | { type: "image"; source: ChatImageSource; field: string };

/** A call of one tool the model asked for; `arguments` is the JSON text of its input. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: "user"; parts: ChatPart[] }
  | { role: "assistant"; parts: ChatPart[]; toolCalls: ChatToolCall[] }
  /** The result of one tool call, answered by the client. */
  | { role: "tool"; toolCallId: string; parts: ChatPart[]; isError?: boolean };

export interface ChatTool {
  name: string;
  description?: string;
  /** JSON schema of the tool's input. */
  parameters: Record<string, unknown>;
}

export type ChatToolChoice =
  | { kind: "auto" }
  | { kind: "none" }
  | { kind: "required" }
  | { kind: "tool"; name: string };

export type ChatResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict: boolean };

export type ChatReasoningEffort = "minimal" | "low" | "medium" | "high";

/**
 * The settings of OpenAI's own API an upstream of another wire receives in `openAiOnly`, and
 * whether they can change the answer: `store` and `metadata` only keep the call in OpenAI's own
 * records, so another upstream leaves them out; the others change what the model does, so another
 * upstream refuses them.
 */
export const OPENAI_ONLY_FIELDS = {
  store: "harmless",
  metadata: "harmless",
  service_tier: "changes the answer",
  prediction: "changes the answer",
  web_search_options: "changes the answer",
  modalities: "changes the answer",
} as const;

/**
 * The first setting of OpenAI's own API in the request that changes the answer, for an upstream
 * that cannot honour any of them; null when there is none.
 */
export function answerChangingOpenAiField(request: ChatRequest): string | null {
  for (const [name, value] of Object.entries(request.openAiOnly ?? {})) {
    // Text alone is what every chat upstream answers: asking for it changes nothing.
    if (name === "modalities" && JSON.stringify(value) === '["text"]') continue;
    if (OPENAI_ONLY_FIELDS[name as keyof typeof OPENAI_ONLY_FIELDS] === "changes the answer") return name;
  }
  return null;
}

export interface ChatRequest {
  /** System (and developer) instructions, in order. */
  system: string[];
  messages: ChatMessage[];
  tools: ChatTool[];
  toolChoice: ChatToolChoice | null;
  /** Most output tokens of one choice, or null for the model's maximum. */
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  stop: string[];
  /** Choices asked for. */
  n: number;
  seed: number | null;
  /** OpenAI's penalties (-2 to 2) as the client set them; absent when it did not. */
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** The end user, as the client names it (passed on where the upstream takes it). */
  user: string | null;
  responseFormat: ChatResponseFormat;
  /**
   * How hard a reasoning model thinks before it answers (OpenAI's `reasoning_effort`); absent for
   * the model's default. Each upstream maps it to its own setting, or refuses it.
   */
  reasoningEffort?: ChatReasoningEffort;
  /** False: at most one tool call per turn; absent: the upstream's default (several allowed). */
  parallelToolCalls?: boolean;
  /**
   * The output limit under the names an OpenAI client gave it (`max_tokens`,
   * `max_completion_tokens`, or both), so that an upstream of the same wire gets the same names:
   * OpenAI's reasoning models refuse `max_tokens`.
   */
  openAiOutputLimits?: { max_tokens?: number; max_completion_tokens?: number };
  /**
   * Settings of OpenAI's own API the canonical form has no meaning for (`store`, `metadata`,
   * `service_tier`, `prediction`, `web_search_options`, `modalities`), by their wire name, as the
   * client sent them: an upstream of that wire gets them unchanged, any other refuses them or,
   * where they cannot change the answer, leaves them out (see `OPENAI_ONLY_FIELDS`).
   */
  openAiOnly?: Record<string, unknown>;
  /**
   * Fields set by the client that only some upstreams can honour, by the name the client used
   * (`n`, `seed`, `response_format`...): an upstream that cannot honour one refuses to serve.
   */
  fieldNames: Record<string, string>;
}

/**
 * Why a choice ended. `stop`: a natural end; `stop_sequence`: one of the request's stop
 * strings; `length`: the output limit; `tool_calls`: the model calls tools; `content_filter`:
 * output withheld for safety.
 */
export type ChatFinishReason = "stop" | "stop_sequence" | "length" | "tool_calls" | "content_filter";

/** Usage as the upstream reported it. Input includes cached input; output includes reasoning. */
/** An answer's usage in disjoint buckets, as the upstream family's reader found it (see token-usage.ts). */
export type ChatUsage = ReportedUsage;

export interface ChatChoice {
  index: number;
  text: string;
  /**
   * The model's reasoning before its answer, where the upstream shows it (DeepSeek's
   * `reasoning_content`); absent or empty when it shows none.
   */
  reasoning?: string;
  toolCalls: ChatToolCall[];
  finishReason: ChatFinishReason;
  /** The stop string that ended the choice, where the upstream says. */
  stopSequence?: string | null;
}

export interface ChatAnswer {
  id: string;
  model: string;
  choices: ChatChoice[];
  usage: ChatUsage | null;
}

/**
 * One event of a streamed answer. `usage` is cumulative (the last one counts); a choice ends
 * with its `finish`. Tool calls arrive as a start (id and name) and argument pieces, keyed by
 * their index within the choice. A choice's `reasoning` pieces come before its text.
 */
export type ChatEvent =
  /**
   * The answer begins. `usage`: the input side as the upstream reported it at the start (its
   * output counts are 0), where the upstream's stream reports it there (Anthropic's does).
   */
  | { type: "start"; id: string; model: string; usage?: ChatUsage }
  | { type: "reasoning"; choice: number; text: string }
  | { type: "text"; choice: number; text: string }
  | { type: "tool_call_start"; choice: number; index: number; id: string; name: string }
  | { type: "tool_call_delta"; choice: number; index: number; arguments: string }
  | { type: "finish"; choice: number; reason: ChatFinishReason; stopSequence?: string | null }
  | { type: "usage"; usage: ChatUsage };

/** Text of every text part, joined. */
export function textOf(parts: readonly ChatPart[]): string {
  let text = "";
  for (const p of parts) if (p.type === "text") text += p.text;
  return text;
}
