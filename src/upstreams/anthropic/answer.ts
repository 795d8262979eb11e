import type { ChatAnswer, ChatEvent, ChatFinishReason, ChatToolCall, ChatUsage } from "../../core/chat/canonical.js";
import { UsageReader } from "../../core/token-usage.js";
import { answerIdentity, finishByTable } from "../chat-answer-reading.js";

const STOP: Record<string, ChatFinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop_sequence",
  max_tokens: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  pause_turn: "stop",
};

const finishFromStopReason = (reason: unknown) => finishByTable(STOP, reason);

/** A forced structured-output call ends the turn as a natural stop, not as a call for the client to run. */
const structuredFinish = (reason: ChatFinishReason, structuredTool: string | null): ChatFinishReason =>
  structuredTool !== null && reason === "tool_calls" ? "stop" : reason;

/**
 * Anthropic's usage in buckets: its `input_tokens` leave out cache reads and writes, which it
 * reports on their own; cache writes by duration in `cache_creation` (else all of
 * `cache_creation_input_tokens` as 5-minute writes). Its `output_tokens` include the thinking:
 * all of it is output.
 */
export function usageFromAnthropic(usage: unknown): ChatUsage | null {
  if (!usage || typeof usage !== "object") return null;
  const u = usage as Record<string, unknown>;
  const read = new UsageReader();
  const creation = u.cache_creation;
  let write5m: number;
  let write1h: number;
  if (creation && typeof creation === "object") {
    const c = creation as Record<string, unknown>;
    write5m = read.count(c.ephemeral_5m_input_tokens, "cache_creation.ephemeral_5m_input_tokens");
    write1h = read.count(c.ephemeral_1h_input_tokens, "cache_creation.ephemeral_1h_input_tokens");
  } else {
    write5m = read.count(u.cache_creation_input_tokens, "cache_creation_input_tokens");
    write1h = 0;
  }
  return read.done({
    input: read.count(u.input_tokens, "input_tokens"),
    cacheRead: read.count(u.cache_read_input_tokens, "cache_read_input_tokens"),
    cacheWrite5m: write5m,
    cacheWrite1h: write1h,
    output: read.count(u.output_tokens, "output_tokens"),
  });
}

/**
 * A `message` answer in canonical form (one choice). `structuredTool`: the tool a response format
 * went as; its call is the answer's text (the JSON), and the turn a natural stop.
 */
export function answerFromAnthropic(
  body: unknown,
  fallbackModel: string,
  structuredTool: string | null = null,
): ChatAnswer {
  const b = (body ?? {}) as Record<string, any>;
  let text = "";
  let reasoning = "";
  const toolCalls: ChatToolCall[] = [];
  for (const block of Array.isArray(b.content) ? b.content : []) {
    if (block?.type === "text" && typeof block.text === "string") text += block.text;
    // Extended thinking (asked for through reasoning_effort) is the choice's reasoning.
    if (block?.type === "thinking" && typeof block.thinking === "string") reasoning += block.thinking;
    if (block?.type === "tool_use" && structuredTool !== null && block.name === structuredTool) {
      text += JSON.stringify(block.input ?? {});
    } else if (block?.type === "tool_use") {
      toolCalls.push({
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        arguments: JSON.stringify(block.input ?? {}),
      });
    }
  }
  return {
    ...answerIdentity(b.id, b.model, fallbackModel),
    choices: [
      {
        index: 0,
        text,
        ...(reasoning ? { reasoning } : {}),
        toolCalls,
        finishReason: structuredFinish(finishFromStopReason(b.stop_reason), structuredTool),
        stopSequence: typeof b.stop_sequence === "string" ? b.stop_sequence : null,
      },
    ],
    usage: usageFromAnthropic(b.usage),
  };
}

/**
 * Reads the Messages stream's events into canonical ones. Usage arrives in two halves: input in
 * `message_start`, the cumulative output in each `message_delta`.
 */
export class AnthropicEventReader {
  private readonly toolIndex = new Map<number, number>();
  /** Content blocks that are the structured-output tool's call: their JSON is the answer's text. */
  private readonly structuredBlocks = new Set<number>();
  private input: Record<string, unknown> = {};

  constructor(
    private readonly fallbackModel: string,
    private readonly structuredTool: string | null = null,
  ) {}

  read(event: unknown): ChatEvent[] {
    const e = (event ?? {}) as Record<string, any>;
    switch (e.type) {
      case "message_start": {
        const m = e.message ?? {};
        this.input = { ...(m.usage ?? {}) };
        const model = typeof m.model === "string" ? m.model : this.fallbackModel;
        const usage = usageFromAnthropic({ ...this.input, output_tokens: 0 });
        return [{ type: "start", id: String(m.id ?? ""), model, ...(usage ? { usage } : {}) }];
      }
      case "content_block_start": {
        const b = e.content_block ?? {};
        if (b.type === "tool_use" && this.structuredTool !== null && b.name === this.structuredTool) {
          this.structuredBlocks.add(Number(e.index));
          return [];
        }
        if (b.type === "tool_use") {
          const index = this.toolIndex.size;
          this.toolIndex.set(Number(e.index), index);
          return [{ type: "tool_call_start", choice: 0, index, id: String(b.id ?? ""), name: String(b.name ?? "") }];
        }
        if (b.type === "text" && typeof b.text === "string" && b.text !== "")
          return [{ type: "text", choice: 0, text: b.text }];
        if (b.type === "thinking" && typeof b.thinking === "string" && b.thinking !== "")
          return [{ type: "reasoning", choice: 0, text: b.thinking }];
        return [];
      }
      case "content_block_delta": {
        const d = e.delta ?? {};
        if (d.type === "text_delta" && typeof d.text === "string") return [{ type: "text", choice: 0, text: d.text }];
        if (d.type === "thinking_delta" && typeof d.thinking === "string" && d.thinking !== "")
          return [{ type: "reasoning", choice: 0, text: d.thinking }];
        if (d.type === "input_json_delta" && typeof d.partial_json === "string" && d.partial_json !== "") {
          if (this.structuredBlocks.has(Number(e.index))) return [{ type: "text", choice: 0, text: d.partial_json }];
          const index = this.toolIndex.get(Number(e.index)) ?? 0;
          return [{ type: "tool_call_delta", choice: 0, index, arguments: d.partial_json }];
        }
        return [];
      }
      case "message_delta": {
        const out: ChatEvent[] = [];
        // A field the delta leaves out or sends as null keeps what message_start said.
        const delta = Object.entries((e.usage ?? {}) as Record<string, unknown>).filter(([, v]) => v != null);
        const usage = usageFromAnthropic({ ...this.input, ...Object.fromEntries(delta) });
        if (usage) out.push({ type: "usage", usage });
        if (e.delta?.stop_reason) {
          out.push({
            type: "finish",
            choice: 0,
            reason: structuredFinish(finishFromStopReason(e.delta.stop_reason), this.structuredTool),
            stopSequence: typeof e.delta.stop_sequence === "string" ? e.delta.stop_sequence : null,
          });
        }
        return out;
      }
      default:
        return [];
    }
  }
}
