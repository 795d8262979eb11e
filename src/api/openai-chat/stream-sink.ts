import type { ChatEvent, ChatUsage } from "../../core/chat/canonical.js";
import type { ChatSink } from "../../core/chat/ports.js";
import type { GatewayError } from "../../core/errors.js";
import { errorBody } from "../../http/surfaces.js";
import type { SseWriter } from "../chat/sse-writer.js";
import { openAiChoiceFinish, openAiUsage } from "./answer.js";

const RESOLVED = Promise.resolve();

/**
 * Canonical events as `chat.completion.chunk`s: the first event of each choice carries the
 * assistant role; reasoning goes in `reasoning_content` deltas; tool calls start with their id and name and continue with argument pieces;
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
    private readonly head: { id: string; model: string; created: number; includeUsage: boolean; legacy?: boolean },
  ) {
    const { id, model, created } = head;
    this.prefix = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${JSON.stringify(created)},"model":${JSON.stringify(model)},"choices":`;
  }

  /**
   * A chunk of a tool call: its start (id and name) or a piece of its arguments. In the legacy
   * form a choice's first call is `function_call` (name, then argument pieces; it has no id).
   */
  private toolChunk(choice: number, toolCall: Record<string, any>): Promise<void> {
    let delta: Record<string, unknown> = { tool_calls: [toolCall] };
    if (this.head.legacy && toolCall.index === 0) {
      const { name, arguments: pieces } = toolCall.function;
      delta = { function_call: name === undefined ? { arguments: pieces } : { name, arguments: pieces } };
    }
    if (!this.opened.has(choice)) {
      // As OpenAI's own stream: a choice that opens with a tool call has no content, not an empty one.
      this.opened.add(choice);
      delta = { role: "assistant", content: null, ...delta };
    }
    return this.send([{ index: choice, delta, logprobs: null, finish_reason: null }]);
  }

  /** A chunk of reasoning: `reasoning_content`, as DeepSeek's API streams it. */
  private reasoning(choice: number, text: string): Promise<void> {
    const piece = `"reasoning_content":${JSON.stringify(text)}`;
    let delta = `{${piece}}`;
    if (!this.opened.has(choice)) {
      this.opened.add(choice);
      delta = `{"role":"assistant",${piece}}`;
    }
    return this.sendText(`[{"index":${JSON.stringify(choice)},"delta":${delta},"logprobs":null,"finish_reason":null}]`);
  }

  /**
   * A chunk of text (`content`), or of nothing but its finish reason (`content` null): the
   * frequent chunks, their JSON made around the text's own (the same text, field for field, as
   * the object graph serialised whole would give, which is what it was).
   */
  private plain(choice: number, content: string | null, finishReason: string | null = null): Promise<void> {
    let delta: string;
    if (!this.opened.has(choice)) {
      this.opened.add(choice);
      delta = `{"role":"assistant","content":${content === null ? '""' : JSON.stringify(content)}}`;
    } else delta = content === null ? "{}" : `{"content":${JSON.stringify(content)}}`;
    const finish = finishReason === null ? "null" : JSON.stringify(finishReason);
    return this.sendText(
      `[{"index":${JSON.stringify(choice)},"delta":${delta},"logprobs":null,"finish_reason":${finish}}]`,
    );
  }

  private send(choices: unknown[], usage?: ChatUsage): Promise<void> {
    return this.sendText(JSON.stringify(choices), usage);
  }

  private sendText(choices: string, usage?: ChatUsage): Promise<void> {
    const tail = this.head.includeUsage ? `,"usage":${usage ? JSON.stringify(openAiUsage(usage)) : "null"}}` : "}";
    return this.sse.send(`${this.prefix}${choices}${tail}`);
  }

  /** Not an async function: the writer's promise is handed back as it is (no promise more per event). */
  event(event: ChatEvent): Promise<void> {
    switch (event.type) {
      case "start":
        // A choice opens with its first content (text, a tool call, reasoning), as OpenAI's stream
        // does: an empty text chunk here would come before a tool call too.
        return RESOLVED;
      case "reasoning":
        return this.reasoning(event.choice, event.text);
      case "text":
        return this.plain(event.choice, event.text);
      case "tool_call_start":
        return this.toolChunk(event.choice, {
          index: event.index,
          id: event.id,
          type: "function",
          function: { name: event.name, arguments: "" },
        });
      case "tool_call_delta":
        return this.toolChunk(event.choice, { index: event.index, function: { arguments: event.arguments } });
      case "finish":
        return this.plain(event.choice, null, openAiChoiceFinish(event.reason, this.head.legacy === true));
      case "usage":
        return RESOLVED;
    }
  }

  settling(): void {
    this.sse.holdForEnd();
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
