import { describe, expect, it } from "vitest";
import { anthropicMessage } from "../../src/api/anthropic/answer.js";
import { AnthropicEventSink } from "../../src/api/anthropic/stream-sink.js";
import type { SseWriter } from "../../src/api/chat/sse-writer.js";
import { tokenUsage } from "../../src/core/token-usage.js";

/** An SSE writer that keeps every event's name and data. */
function capture() {
  const sent: { event: string | undefined; data: string }[] = [];
  const sse = {
    send: async (data: string, event?: string) => {
      sent.push({ event, data });
    },
    end: () => {},
  } as unknown as SseWriter;
  return { sse, sent };
}

describe("the Anthropic event sink's text", () => {
  it("writes each event as JSON with its type first, field for field, text deltas included", async () => {
    const { sse, sent } = capture();
    const sink = new AnthropicEventSink(sse, { id: "msg_1", model: "m" });
    await sink.event({ type: "start" } as never);
    // Text that JSON escapes: quotes, a line break, a backslash, a line separator, a NUL.
    for (const text of ['say "hi"\n', "\\", "\u2028\u0000é"])
      await sink.event({ type: "text", choice: 0, text } as never);
    await sink.event({ type: "tool_call_start", choice: 0, index: 0, id: "toolu_1", name: "f" } as never);
    await sink.event({ type: "tool_call_delta", choice: 0, index: 0, arguments: '{"x":1}' } as never);
    await sink.event({ type: "text", choice: 0, text: "after" } as never);
    await sink.event({ type: "finish", choice: 0, reason: "stop" } as never);
    await sink.end(tokenUsage({ input: 3, output: 4 }));

    const textDelta = (index: number, text: string) => ({
      type: "content_block_delta",
      index,
      delta: { type: "text_delta", text },
    });
    const deltas = sent.filter((e) => e.event === "content_block_delta");
    expect(deltas.map((e) => e.data)).toEqual(
      [
        textDelta(0, 'say "hi"\n'),
        textDelta(0, "\\"),
        textDelta(0, "\u2028\u0000é"),
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"x":1}' } },
        textDelta(2, "after"),
      ].map((e) => JSON.stringify(e)),
    );
    // Every event's data names its own event, and the blocks open and close in order.
    for (const e of sent) expect(JSON.parse(e.data).type).toBe(e.event);
    expect(sent.map((e) => e.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });
});

describe("the Anthropic surface's reasoning", () => {
  it("streams the reasoning as a thinking block before the text block", async () => {
    const { sse, sent } = capture();
    const sink = new AnthropicEventSink(sse, { id: "msg_1", model: "m" });
    await sink.event({ type: "start", id: "u", model: "m" });
    await sink.event({ type: "reasoning", choice: 0, text: "6 times " });
    await sink.event({ type: "reasoning", choice: 0, text: "7" });
    await sink.event({ type: "text", choice: 0, text: "42" });
    await sink.event({ type: "finish", choice: 0, reason: "stop" });
    await sink.end(tokenUsage({ input: 3, output: 4, reasoning: 5 }));
    const blocks = sent.filter((e) => e.event?.startsWith("content_block")).map((e) => JSON.parse(e.data));
    expect(blocks).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "6 times " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "7" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "42" } },
      { type: "content_block_stop", index: 1 },
    ]);
  });

  it("answers a whole message's reasoning as its first content block", () => {
    const message = anthropicMessage(
      {
        id: "u",
        model: "m",
        choices: [{ index: 0, text: "42", reasoning: "6 times 7", toolCalls: [], finishReason: "stop" }],
        usage: tokenUsage({ input: 3, output: 4, reasoning: 5 }),
      },
      "msg_1",
      "m",
    );
    expect(message.content).toEqual([
      { type: "thinking", thinking: "6 times 7", signature: "" },
      { type: "text", text: "42" },
    ]);
    expect(message.usage.output_tokens).toBe(9);
  });
});

describe("the Anthropic stream's message_start usage", () => {
  const startUsage = (sent: { event: string | undefined; data: string }[]) =>
    JSON.parse(sent.find((e) => e.event === "message_start")?.data ?? "{}").message.usage;

  it("carries the input the upstream reported at its start, cached part apart", async () => {
    const { sse, sent } = capture();
    const sink = new AnthropicEventSink(sse, { id: "msg_1", model: "m", inputEstimate: () => 999 });
    await sink.event({
      type: "start",
      id: "u",
      model: "m",
      usage: tokenUsage({ input: 20, cacheRead: 100, cacheWrite5m: 30, cacheWrite1h: 7 }),
    });
    expect(startUsage(sent)).toEqual({
      input_tokens: 20,
      output_tokens: 0,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 37,
      cache_creation: { ephemeral_5m_input_tokens: 30, ephemeral_1h_input_tokens: 7 },
    });
  });

  it("carries the gateway's count of the request when the upstream reports input only at the end", async () => {
    const { sse, sent } = capture();
    let counted = 0;
    const sink = new AnthropicEventSink(sse, {
      id: "msg_1",
      model: "m",
      inputEstimate: () => {
        counted += 1;
        return 42;
      },
    });
    await sink.event({ type: "start", id: "u", model: "m" });
    expect(startUsage(sent)).toMatchObject({ input_tokens: 42, output_tokens: 0 });
    expect(counted).toBe(1);
  });
});
