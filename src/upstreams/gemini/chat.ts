import type {
  ChatAnswer,
  ChatChoice,
  ChatEvent,
  ChatFinishReason,
  ChatMessage,
  ChatPart,
  ChatReasoningEffort,
  ChatRequest,
  ChatUsage,
} from "../../core/chat/canonical.js";
import { THINKING_BUDGET } from "../../core/chat/estimate.js";
import type { ChatUpstream, Untranslatable } from "../../core/chat/ports.js";
import {
  openAiOnlyRefusal,
  parsedArguments,
  putSampling,
  type SamplingNames,
  serialToolCallsRefusal,
  spokenParts,
} from "../../core/chat/wire-helpers.js";
import { usageFromMetadata } from "../../core/content/usage.js";
import { StreamStart } from "../chat-answer-reading.js";
import type { UpstreamEndpoint } from "../http.js";
import { countContentTokens, generateContent, openContentStream } from "./content.js";

const FINISH: Record<string, ChatFinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
};

function part(p: ChatPart): unknown {
  if (p.type === "text") return { text: p.text };
  if (p.source.kind === "inline")
    return { inlineData: { mimeType: p.source.image.mimeType, data: p.source.image.data } };
  return { fileData: { fileUri: p.source.url } };
}

/** The function name of each tool call id, for the `functionResponse` of its result. */
function callNames(messages: ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) if (m.role === "assistant") for (const c of m.toolCalls) names.set(c.id, c.name);
  return names;
}

function content(message: ChatMessage, names: Map<string, string>): { role: string; parts: unknown[] } {
  switch (message.role) {
    case "user":
      return { role: "user", parts: message.parts.map(part) };
    case "assistant":
      return {
        role: "model",
        parts: [
          ...spokenParts(message).map(part),
          ...message.toolCalls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: parsedArguments(c) } })),
        ],
      };
    case "tool":
      return {
        role: "user",
        parts: [
          {
            functionResponse: {
              id: message.toolCallId,
              name: names.get(message.toolCallId) ?? "",
              response: { content: message.parts.map((p) => (p.type === "text" ? p.text : "")).join("") },
            },
          },
        ],
      };
  }
}

/** Consecutive turns of one role become one (Gemini alternates user and model). */
function merged(contents: { role: string; parts: unknown[] }[]) {
  const out: { role: string; parts: unknown[] }[] = [];
  for (const c of contents) {
    const last = out[out.length - 1];
    if (last && last.role === c.role) last.parts.push(...c.parts);
    else out.push({ role: c.role, parts: [...c.parts] });
  }
  return out;
}

/** The `generateContent` body of a canonical request. */
export function geminiChatBody(request: ChatRequest): Record<string, unknown> {
  const names = callNames(request.messages);
  const body: Record<string, unknown> = { contents: merged(request.messages.map((m) => content(m, names))) };
  if (request.system.length > 0) body.systemInstruction = { parts: [{ text: request.system.join("\n\n") }] };
  if (request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parametersJsonSchema: t.parameters,
        })),
      },
    ];
  }
  const choice = request.toolChoice;
  if (choice) {
    const mode = choice.kind === "none" ? "NONE" : choice.kind === "auto" ? "AUTO" : "ANY";
    body.toolConfig = {
      functionCallingConfig: { mode, ...(choice.kind === "tool" ? { allowedFunctionNames: [choice.name] } : {}) },
    };
  }
  const config: Record<string, unknown> = {};
  putSampling(config, request, GEMINI_SAMPLING);
  if (request.responseFormat.type !== "text") config.responseMimeType = "application/json";
  if (request.responseFormat.type === "json_schema") config.responseJsonSchema = request.responseFormat.schema;
  if (request.reasoningEffort)
    config.thinkingConfig = { thinkingBudget: GEMINI_THINKING_BUDGET[request.reasoningEffort] };
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/**
 * `thinkingConfig.thinkingBudget` for each reasoning effort: Google's own mapping of OpenAI's
 * `reasoning_effort` (low 1024, medium 8192, high 24576); `minimal` turns thinking off (0), which
 * a model that always thinks (Gemini 2.5 Pro) refuses.
 */
const GEMINI_THINKING_BUDGET: Record<ChatReasoningEffort, number> = { ...THINKING_BUDGET, minimal: 0 };

const GEMINI_SAMPLING: SamplingNames = {
  maxOutputTokens: "maxOutputTokens",
  temperature: "temperature",
  topP: "topP",
  stop: "stopSequences",
  n: "candidateCount",
  seed: "seed",
  frequencyPenalty: "frequencyPenalty",
  presencePenalty: "presencePenalty",
};

/** Gemini's `usageMetadata` in buckets, read as the content surface reads it. */
function usageOf(meta: unknown): ChatUsage | null {
  return usageFromMetadata(meta);
}

/**
 * What Gemini cannot carry: a tool result or tool call it could not read, one tool call per turn
 * (it has no setting for that), OpenAI's own settings that change the answer.
 */
function untranslatable(request: ChatRequest): Untranslatable | null {
  const openAiOnly = serialToolCallsRefusal(request, "Gemini") ?? openAiOnlyRefusal(request, "Gemini");
  if (openAiOnly) return openAiOnly;
  const names = callNames(request.messages);
  for (const [i, m] of request.messages.entries()) {
    if (m.role === "tool" && !names.has(m.toolCallId)) {
      return {
        field: `messages[${i}]`,
        reason: `tool result "${m.toolCallId}" answers no tool call of an earlier message`,
      };
    }
    if (m.role !== "assistant") continue;
    for (const call of m.toolCalls) {
      try {
        if (call.arguments.trim() !== "") JSON.parse(call.arguments);
      } catch {
        return { field: `messages[${i}].tool_calls`, reason: `the arguments of tool call "${call.id}" are not JSON` };
      }
    }
  }
  return null;
}

/**
 * Reads Gemini response chunks into canonical events. Function calls arrive whole: each gives a
 * start and one argument piece. A prompt blocked for safety ends choice 0 as `content_filter`.
 */
class GeminiChunkReader {
  private readonly start: StreamStart;
  private readonly calls = new Map<number, number>();
  private id = "";

  constructor(fallbackModel: string) {
    this.start = new StreamStart(fallbackModel);
  }

  read(chunk: unknown): ChatEvent[] {
    const c = (chunk ?? {}) as Record<string, any>;
    const start = this.start.at(c.responseId, c.modelVersion);
    if (start) this.id = start.id;
    const out: ChatEvent[] = start ? [start] : [];
    const usage = usageOf(c.usageMetadata);
    if (c.promptFeedback?.blockReason && !Array.isArray(c.candidates)) {
      if (usage) out.push({ type: "usage", usage });
      out.push({ type: "finish", choice: 0, reason: "content_filter" });
      return out;
    }
    for (const [i, cand] of (Array.isArray(c.candidates) ? c.candidates : []).entries()) {
      const choice = typeof cand?.index === "number" ? cand.index : i;
      let called = false;
      for (const p of Array.isArray(cand?.content?.parts) ? cand.content.parts : []) {
        if (typeof p?.text === "string" && p.text !== "" && p.thought !== true)
          out.push({ type: "text", choice, text: p.text });
        if (p?.functionCall) {
          const index = this.calls.get(choice) ?? 0;
          this.calls.set(choice, index + 1);
          const id = typeof p.functionCall.id === "string" ? p.functionCall.id : `call_${this.id}_${choice}_${index}`;
          out.push({ type: "tool_call_start", choice, index, id, name: String(p.functionCall.name ?? "") });
          out.push({ type: "tool_call_delta", choice, index, arguments: JSON.stringify(p.functionCall.args ?? {}) });
          called = true;
        }
      }
      if (cand?.finishReason) {
        const calledBefore = called || (this.calls.get(choice) ?? 0) > 0;
        const reason = FINISH[String(cand.finishReason)] ?? "stop";
        out.push({ type: "finish", choice, reason: reason === "stop" && calledBefore ? "tool_calls" : reason });
      }
    }
    if (usage) out.push({ type: "usage", usage });
    return out;
  }
}

/** A whole `generateContent` answer in canonical form. */
function answerOf(value: unknown, fallbackModel: string): ChatAnswer {
  const events = new GeminiChunkReader(fallbackModel).read(value);
  const start = events.find((e) => e.type === "start");
  const choices = new Map<number, ChatChoice>();
  const choiceAt = (index: number) => {
    let c = choices.get(index);
    if (!c) {
      c = { index, text: "", toolCalls: [], finishReason: "stop" };
      choices.set(index, c);
    }
    return c;
  };
  let usage: ChatUsage | null = null;
  for (const e of events) {
    if (e.type === "text") choiceAt(e.choice).text += e.text;
    if (e.type === "tool_call_start") choiceAt(e.choice).toolCalls.push({ id: e.id, name: e.name, arguments: "" });
    if (e.type === "tool_call_delta") {
      const call = choiceAt(e.choice).toolCalls[e.index];
      if (call) call.arguments += e.arguments;
    }
    if (e.type === "finish") choiceAt(e.choice).finishReason = e.reason;
    if (e.type === "usage") usage = e.usage;
  }
  return {
    id: start?.type === "start" ? start.id : "",
    model: start?.type === "start" ? start.model : fallbackModel,
    choices: [...choices.values()].sort((a, b) => a.index - b.index),
    usage,
  };
}

async function* eventsOf(first: unknown, rest: AsyncGenerator<{ value: unknown }>, model: string) {
  const reader = new GeminiChunkReader(model);
  for (const e of reader.read(first)) yield e;
  for await (const chunk of rest) for (const e of reader.read(chunk.value)) yield e;
}

/** The `gemini` protocol serving chat: the content adapter's wire code, behind the canonical form. */
export const geminiChatUpstream: ChatUpstream<UpstreamEndpoint> = {
  untranslatable,
  async complete(channel, upstreamModel, request, signal) {
    const answer = await generateContent(channel, upstreamModel, { value: geminiChatBody(request) }, signal);
    return answerOf(answer.value, upstreamModel);
  },
  async openStream(channel, upstreamModel, request, signal) {
    const stream = await openContentStream(channel, upstreamModel, { value: geminiChatBody(request) }, signal);
    return eventsOf(stream.first.value, stream.rest, upstreamModel);
  },
  async countTokens(channel, upstreamModel, request, signal) {
    const generateContentRequest = { model: `models/${upstreamModel}`, ...geminiChatBody(request) };
    const counted = await countContentTokens(channel, upstreamModel, { value: { generateContentRequest } }, signal);
    return counted.totalTokens;
  },
};
