import type { ChatEvent, ChatFinishReason, ChatUsage } from "../../core/chat/canonical.js";
import type { ChatSink } from "../../core/chat/ports.js";
import type { GatewayError } from "../../core/errors.js";
import { tokenUsage } from "../../core/token-usage.js";
import { errorBody } from "../../http/surfaces.js";
import type { SseWriter } from "../chat/sse-writer.js";
import { anthropicStopReason, anthropicUsage } from "./answer.js";

/**
 * Canonical events as the Messages stream: `message_start` (with the input tokens, as Anthropic
 * sends them there: the upstream's where its stream reports them at the start, else the gateway's
 * count of the request; `message_delta` carries the billed figures) and a `ping`, then each content block
 * (`content_block_start`, its `thinking_delta`, `text_delta` or `input_json_delta` pieces,
 * `content_block_stop`),
 * then `message_delta` with the stop reason and the usage billed, and `message_stop`.
 */
export class AnthropicEventSink implements ChatSink {
  private index = -1;
  private open = false;
  private openKind: "thinking" | "text" | "tool" | null = null;
  private toolBlock = new Map<number, number>();
  private finish: { reason: ChatFinishReason; stopSequence: string | null } = { reason: "stop", stopSequence: null };

  constructor(
    private readonly sse: SseWriter,
    private readonly head: {
      id: string;
      model: string;
      /** The gateway's count of the input, for an upstream whose stream reports none at its start. */
      inputEstimate?: () => number;
    },
  ) {}

  private send(type: string, data: Record<string, unknown>): Promise<void> {
    return this.sse.send(JSON.stringify({ type, ...data }), type);
  }

  private async closeBlock(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    this.openKind = null;
    await this.send("content_block_stop", { index: this.index });
  }

  private async openBlock(kind: "thinking" | "text" | "tool", block: Record<string, unknown>): Promise<void> {
    await this.closeBlock();
    this.index += 1;
    this.open = true;
    this.openKind = kind;
    await this.send("content_block_start", { index: this.index, content_block: block });
  }

  async event(event: ChatEvent): Promise<void> {
    if ("choice" in event && event.choice !== 0) return;
    switch (event.type) {
      case "start":
        await this.send("message_start", {
          message: {
            id: this.head.id,
            type: "message",
            role: "assistant",
            model: this.head.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: anthropicUsage(event.usage ?? this.estimatedStart()),
          },
        });
        return this.send("ping", {});
      case "reasoning":
        if (this.openKind !== "thinking") {
          await this.openBlock("thinking", { type: "thinking", thinking: "", signature: "" });
        }
        return this.send("content_block_delta", {
          index: this.index,
          delta: { type: "thinking_delta", thinking: event.text },
        });
      case "text":
        if (this.openKind !== "text") await this.openBlock("text", { type: "text", text: "" });
        // The frequent event: its JSON made around the text's own, field for field as `send` gives.
        return this.sse.send(
          `{"type":"content_block_delta","index":${JSON.stringify(this.index)},"delta":{"type":"text_delta","text":${JSON.stringify(event.text)}}}`,
          "content_block_delta",
        );
      case "tool_call_start":
        await this.openBlock("tool", { type: "tool_use", id: event.id, name: event.name, input: {} });
        this.toolBlock.set(event.index, this.index);
        return;
      case "tool_call_delta": {
        const index = this.toolBlock.get(event.index);
        if (index === undefined || index !== this.index) return;
        return this.send("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: event.arguments },
        });
      }
      case "finish":
        this.finish = { reason: event.reason, stopSequence: event.stopSequence ?? null };
        return this.closeBlock();
      case "usage":
        return;
    }
  }

  /** The input at the start of a stream whose upstream reports it only at the end: the gateway's count. */
  private estimatedStart(): ChatUsage {
    const inputTokens = this.head.inputEstimate?.() ?? 0;
    return tokenUsage({ input: inputTokens });
  }

  settling(): void {
    this.sse.holdForEnd();
  }

  async fail(error: GatewayError): Promise<void> {
    await this.sse.send(JSON.stringify(errorBody("anthropic", error)), "error");
    this.sse.end();
  }

  async end(usage: ChatUsage): Promise<void> {
    await this.closeBlock();
    await this.send("message_delta", {
      delta: { stop_reason: anthropicStopReason(this.finish.reason), stop_sequence: this.finish.stopSequence },
      usage: anthropicUsage(usage),
    });
    await this.send("message_stop", {});
    this.sse.end();
  }
}
