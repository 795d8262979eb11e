import type { ChatAnswer, ChatChoice, ChatEvent, ChatFinishReason, ChatUsage } from "../../core/chat/canonical.js";
import { UsageReader } from "../../core/token-usage.js";
import { answerIdentity, finishByTable, StreamStart } from "../chat-answer-reading.js";

const FINISH: Record<string, ChatFinishReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

const finishFromWire = (reason: unknown) => finishByTable(FINISH, reason);

/**
 * Usage of an OpenAI-compatible answer in buckets. `prompt_tokens` includes the cached and audio
 * prompt tokens (`prompt_tokens_details`; DeepSeek reports the cached ones as
 * `prompt_cache_hit_tokens`), `completion_tokens` the reasoning and audio ones
 * (`completion_tokens_details`): each part is taken out of its whole, so no token is billed twice.
 */
export function usageFromWire(usage: unknown): ChatUsage | null {
  if (!usage || typeof usage !== "object") return null;
  const u = usage as Record<string, any>;
  const read = new UsageReader();
  const prompt = read.count(u.prompt_tokens, "prompt_tokens");
  const promptDetails = u.prompt_tokens_details ?? {};
  const cachedField =
    promptDetails.cached_tokens !== undefined && promptDetails.cached_tokens !== null
      ? "prompt_tokens_details.cached_tokens"
      : "prompt_cache_hit_tokens";
  const cachedValue =
    cachedField === "prompt_cache_hit_tokens" ? u.prompt_cache_hit_tokens : promptDetails.cached_tokens;
  const cached = read.part(read.count(cachedValue, cachedField), prompt, cachedField, "prompt_tokens");
  const audioIn = read.part(
    read.count(promptDetails.audio_tokens, "prompt_tokens_details.audio_tokens"),
    prompt - cached,
    "prompt_tokens_details.audio_tokens",
    "prompt_tokens",
  );
  const completion = read.count(u.completion_tokens, "completion_tokens");
  const outDetails = u.completion_tokens_details ?? {};
  const reasoning = read.part(
    read.count(outDetails.reasoning_tokens, "completion_tokens_details.reasoning_tokens"),
    completion,
    "completion_tokens_details.reasoning_tokens",
    "completion_tokens",
  );
  const audioOut = read.part(
    read.count(outDetails.audio_tokens, "completion_tokens_details.audio_tokens"),
    completion - reasoning,
    "completion_tokens_details.audio_tokens",
    "completion_tokens",
  );
  return read.done({
    input: prompt - cached - audioIn,
    cacheRead: cached,
    audioInput: audioIn,
    output: completion - reasoning - audioOut,
    reasoning,
    audioOutput: audioOut,
  });
}

/** Text of a message's `content`: a string, null, or an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}

/** A `chat.completion` answer in canonical form. */
export function answerFromWire(body: unknown, fallbackModel: string): ChatAnswer {
  const b = (body ?? {}) as Record<string, any>;
  const choices: ChatChoice[] = (Array.isArray(b.choices) ? b.choices : []).map((c: any, i: number) => ({
    index: typeof c?.index === "number" ? c.index : i,
    text: contentText(c?.message?.content),
    toolCalls: (Array.isArray(c?.message?.tool_calls) ? c.message.tool_calls : []).map((t: any, j: number) => ({
      id: typeof t?.id === "string" ? t.id : `call_${j}`,
      name: String(t?.function?.name ?? ""),
      arguments: typeof t?.function?.arguments === "string" ? t.function.arguments : "",
    })),
    finishReason: finishFromWire(c?.finish_reason),
  }));
  return {
    ...answerIdentity(b.id, b.model, fallbackModel),
    choices,
    usage: usageFromWire(b.usage),
  };
}

/**
 * Reads `chat.completion.chunk`s into canonical events. Tool calls are keyed by their index in
 * the choice; the first piece of each (it carries the id and name) starts it.
 */
export class OpenAiChunkReader {
  private readonly start: StreamStart;
  private readonly calls = new Set<string>();

  constructor(fallbackModel: string) {
    this.start = new StreamStart(fallbackModel);
  }

  read(chunk: unknown): ChatEvent[] {
    const c = (chunk ?? {}) as Record<string, any>;
    const start = this.start.at(c.id, c.model);
    const out: ChatEvent[] = start ? [start] : [];
    for (const choice of Array.isArray(c.choices) ? c.choices : []) {
      const index = typeof choice?.index === "number" ? choice.index : 0;
      const delta = choice?.delta ?? {};
      if (typeof delta.content === "string" && delta.content !== "") {
        out.push({ type: "text", choice: index, text: delta.content });
      }
      for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const at = typeof piece?.index === "number" ? piece.index : 0;
        const key = `${index}:${at}`;
        if (!this.calls.has(key)) {
          this.calls.add(key);
          out.push({
            type: "tool_call_start",
            choice: index,
            index: at,
            id: typeof piece?.id === "string" ? piece.id : `call_${index}_${at}`,
            name: String(piece?.function?.name ?? ""),
          });
        }
        const args = piece?.function?.arguments;
        if (typeof args === "string" && args !== "") {
          out.push({ type: "tool_call_delta", choice: index, index: at, arguments: args });
        }
      }
      if (choice?.finish_reason) {
        out.push({ type: "finish", choice: index, reason: finishFromWire(choice.finish_reason) });
      }
    }
    const usage = usageFromWire(c.usage);
    if (usage) out.push({ type: "usage", usage });
    return out;
  }
}
