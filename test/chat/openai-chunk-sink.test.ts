import { describe, expect, it } from "vitest";
import type { SseWriter } from "../../src/api/chat/sse-writer.js";
import { chatCompletion } from "../../src/api/openai-chat/answer.js";
import { OpenAiChunkSink } from "../../src/api/openai-chat/stream-sink.js";
import { tokenUsage } from "../../src/core/token-usage.js";

/** An SSE writer that keeps what it is given. */
function capture() {
  const sent: string[] = [];
  let ended = false;
  const sse = {
    send: async (data: string) => {
      sent.push(data);
    },
    end: () => {
      ended = true;
    },
  } as unknown as SseWriter;
  return { sse, sent, ended: () => ended };
}

const usage = tokenUsage({ input: 7, cacheRead: 2, output: 19, reasoning: 5 });

describe("the OpenAI chunk sink's text", () => {
  for (const includeUsage of [true, false]) {
    it(`is each chunk as JSON, field for field in order (usage asked: ${includeUsage})`, async () => {
      // A model name and an id with characters JSON escapes.
      const head = { id: 'chatcmpl-"a\\b"', model: "m\u00e9/\u2028x\n", created: 1_700_000_123, includeUsage };
      const { sse, sent, ended } = capture();
      const sink = new OpenAiChunkSink(sse, head);
      await sink.event({ type: "start" } as never);
      await sink.event({ type: "text", choice: 0, text: 'say "hi"\n' } as never);
      await sink.event({ type: "tool_call_start", choice: 1, index: 0, id: "call_1", name: "f" } as never);
      await sink.event({ type: "tool_call_delta", choice: 1, index: 0, arguments: '{"x":' } as never);
      // A choice whose first event is text, then more of it.
      await sink.event({ type: "text", choice: 2, text: "\u2028é\u0000" } as never);
      await sink.event({ type: "text", choice: 2, text: "\\b" } as never);
      await sink.event({ type: "finish", choice: 0, reason: "stop" } as never);
      // A choice that finishes before anything else of it came, and a tool call's piece on a new choice.
      await sink.event({ type: "finish", choice: 3, reason: "stop_sequence" } as never);
      await sink.event({ type: "tool_call_delta", choice: 4, index: 1, arguments: "}" } as never);
      await sink.end(usage as never);

      const chunk = (choices: unknown[], withUsage?: unknown) => ({
        id: head.id,
        object: "chat.completion.chunk",
        created: head.created,
        model: head.model,
        choices,
        ...(includeUsage ? { usage: withUsage ?? null } : {}),
      });
      const choice = (index: number, delta: unknown, finish: string | null = null) => ({
        index,
        delta,
        logprobs: null,
        finish_reason: finish,
      });
      // The start writes nothing: each choice opens with its first content, as OpenAI's stream does
      // (a choice that opens with a tool call has content null, not an empty text).
      const expected = [
        chunk([choice(0, { role: "assistant", content: 'say "hi"\n' })]),
        chunk([
          choice(1, {
            role: "assistant",
            content: null,
            tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }],
          }),
        ]),
        chunk([choice(1, { tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] })]),
        chunk([choice(2, { role: "assistant", content: "\u2028é\u0000" })]),
        chunk([choice(2, { content: "\\b" })]),
        chunk([choice(0, {}, "stop")]),
        chunk([choice(3, { role: "assistant", content: "" }, "stop")]),
        chunk([
          choice(4, { role: "assistant", content: null, tool_calls: [{ index: 1, function: { arguments: "}" } }] }),
        ]),
        ...(includeUsage
          ? [
              chunk([], {
                prompt_tokens: 9,
                completion_tokens: 24,
                total_tokens: 33,
                prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0 },
                completion_tokens_details: { reasoning_tokens: 5, audio_tokens: 0 },
              }),
            ]
          : []),
      ].map((c) => JSON.stringify(c));
      expect(sent).toEqual([...expected, "[DONE]"]);
      expect(ended()).toBe(true);
    });
  }
});

describe("the OpenAI chunk sink's JSON", () => {
  it("stays valid JSON for a choice index JSON cannot write as a number (an upstream's 1e400)", async () => {
    const { sse, sent } = capture();
    const sink = new OpenAiChunkSink(sse, { id: "c", model: "m", created: 1, includeUsage: false });
    await sink.event({ type: "text", choice: Number.POSITIVE_INFINITY, text: "a" } as never);
    await sink.event({ type: "text", choice: Number.POSITIVE_INFINITY, text: "b" } as never);
    const chunks = sent.map((text) => JSON.parse(text));
    expect(chunks.map((c) => c.choices[0].index)).toEqual([null, null]);
    expect(chunks.map((c) => c.choices[0].delta.content)).toEqual(["a", "b"]);
  });
});

describe("the OpenAI surface's reasoning", () => {
  it("streams a choice's reasoning as `reasoning_content` deltas before its text", async () => {
    const { sse, sent } = capture();
    const sink = new OpenAiChunkSink(sse, { id: "c", model: "m", created: 1, includeUsage: true });
    await sink.event({ type: "start", id: "u", model: "m" });
    await sink.event({ type: "reasoning", choice: 0, text: 'weigh "a"\n' });
    await sink.event({ type: "reasoning", choice: 0, text: "then b" });
    await sink.event({ type: "text", choice: 0, text: "b" });
    // A choice whose first event is reasoning opens with the role.
    await sink.event({ type: "reasoning", choice: 1, text: "x" });
    await sink.event({ type: "finish", choice: 0, reason: "stop" });
    await sink.end(usage);
    const deltas = sent.filter((t) => t !== "[DONE]").map((t) => JSON.parse(t).choices[0]?.delta ?? null);
    expect(deltas).toEqual([
      { role: "assistant", reasoning_content: 'weigh "a"\n' },
      { reasoning_content: "then b" },
      { content: "b" },
      { role: "assistant", reasoning_content: "x" },
      {},
      null,
    ]);
    expect(JSON.parse(sent[sent.length - 2] as string).usage.completion_tokens_details).toEqual({
      reasoning_tokens: 5,
      audio_tokens: 0,
    });
  });

  it("answers a whole choice's reasoning in its message's `reasoning_content`, and none when there is none", () => {
    const answer = {
      id: "u",
      model: "m",
      choices: [
        { index: 0, text: "42", reasoning: "6 times 7", toolCalls: [], finishReason: "stop" as const },
        { index: 1, text: "41", toolCalls: [], finishReason: "stop" as const },
      ],
      usage,
    };
    const completion = chatCompletion(answer, "chatcmpl-1", "m", 1);
    expect(completion.choices[0]?.message).toEqual({
      role: "assistant",
      content: "42",
      reasoning_content: "6 times 7",
      refusal: null,
    });
    expect(completion.choices[1]?.message).not.toHaveProperty("reasoning_content");
    expect(completion.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 5, audio_tokens: 0 });
  });
});
