import type { ChatEvent, ChatUsage } from "../../core/chat/canonical.js";
import type { ChatSink } from "../../core/chat/ports.js";
import type { GatewayError } from "../../core/errors.js";
import type { SseWriter } from "../chat/sse-writer.js";
import { errorBody } from "../surfaces.js";
import { openAiFinish, openAiUsage } from "./answer.js";

/**
 * Canonical events as `chat.completion.chunk`s: the first event of each choice carries the
 * assistant role; tool calls start with their id and name and continue with argument pieces;
 * the usage chunk (empty `choices`) comes last when the client asked for it; `[DONE]` ends it.
 */
export class OpenAiChunkSink implements ChatSink {
  private readonly opened = new Set<number>();

  constructor(
    private readonly sse: SseWriter,
    private readonly head: { id: string; model: string; created: number; includeUsage: boolean },
  ) {}

  private chunk(choice: number, delta: Record<string, unknown>, finishReason: string | null = null): Promise<void> {
    if (!this.opened.has(choice)) {
      this.opened.add(choice);
      delta = {
        role: "assistant",
        ...(delta.content === undefined && !delta.tool_calls ? { content: "" } : {}),
        ...delta,
      };
    }
    return this.send([{ index: choice, delta, logprobs: null, finish_reason: finishReason }]);
  }

  private send(choices: unknown[], usage?: ChatUsage): Promise<void> {
    const { id, model, created, includeUsage } = this.head;
    const body: Record<string, unknown> = { id, object: "chat.completion.chunk", created, model, choices };
    if (includeUsage) body.usage = usage ? openAiUsage(usage) : null;
    return this.sse.send(JSON.stringify(body));
  }

  async event(event: ChatEvent): Promise<void> {
    switch (event.type) {
      case "start":
        return this.chunk(0, {});
      case "text":
        return this.chunk(event.choice, { content: event.text });
      case "tool_call_start":
        return this.chunk(event.choice, {
          tool_calls: [
            { index: event.index, id: event.id, type: "function", function: { name: event.name, arguments: "" } },
          ],
        });
      case "tool_call_delta":
        return this.chunk(event.choice, {
          tool_calls: [{ index: event.index, function: { arguments: event.arguments } }],
        });
      case "finish":
        return this.chunk(event.choice, {}, openAiFinish(event.reason));
      case "usage":
        return;
    }
  }

  async fail(error: GatewayError): Promise<void> {
    await this.sse.send(JSON.stringify(errorBody("openai", error)));
    this.sse.end();
  }

  async end(usage: ChatUsage): Promise<void> {
    if (this.head.includeUsage) await this.send([], usage);
    await this.sse.send("[DONE]");
    this.sse.end();
  }
}
