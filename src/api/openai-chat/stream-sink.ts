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
  /**
   * Every chunk's text up to its `choices`, the same for all chunks of the answer: made once, so
   * that a chunk serialises only its choices (and usage), in the order of the fields as before.
   */
  private readonly prefix: string;

  constructor(
    private readonly sse: SseWriter,
    private readonly head: { id: string; model: string; created: number; includeUsage: boolean },
  ) {
    const { id, model, created } = head;
    this.prefix = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${JSON.stringify(created)},"model":${JSON.stringify(model)},"choices":`;
  }

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
    const tail = this.head.includeUsage ? `,"usage":${usage ? JSON.stringify(openAiUsage(usage)) : "null"}}` : "}";
    return this.sse.send(`${this.prefix}${JSON.stringify(choices)}${tail}`);
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
