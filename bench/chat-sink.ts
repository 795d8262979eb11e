/**
 * The chat stream sinks alone: CPU per answer of turning a chat stream's canonical events (a
 * start, five pieces of text, a finish and the usage) into the client's events, OpenAI's
 * `chat.completion.chunk`s and Anthropic's Messages events, written to a writer that keeps only
 * their length (no socket, no HTTP).
 *
 * Usage: node --import tsx bench/chat-sink.ts [--answers 100000] [--rounds 6]
 */
import { parseArgs } from "node:util";
import { AnthropicEventSink } from "../src/api/anthropic/stream-sink.js";
import type { SseWriter } from "../src/api/chat/sse-writer.js";
import { OpenAiChunkSink } from "../src/api/openai-chat/stream-sink.js";
import type { ChatEvent } from "../src/core/chat/canonical.js";
import type { ChatSink } from "../src/core/chat/ports.js";
import { tokenUsage } from "../src/core/token-usage.js";
import { median } from "./load.js";

const { values } = parseArgs({
  options: { answers: { type: "string", default: "100000" }, rounds: { type: "string", default: "6" } },
});
const answers = Number(values.answers);
const rounds = Number(values.rounds);

const RESOLVED = Promise.resolve();
let written = 0;
const writer = {
  send(data: string) {
    written += data.length;
    return RESOLVED;
  },
  end() {},
} as unknown as SseWriter;

const events = [
  { type: "start" },
  ...["Hello", " there,", " friend,", " how are", " you?"].map((text) => ({ type: "text", choice: 0, text })),
  { type: "finish", choice: 0, reason: "stop" },
  { type: "usage", usage: tokenUsage({ input: 9, output: 24 }) },
] as unknown as ChatEvent[];
const usage = tokenUsage({ input: 9, output: 24 });

const sinks: Record<string, () => ChatSink> = {
  "OpenAI chunks": () =>
    new OpenAiChunkSink(writer, {
      id: "chatcmpl-bench",
      model: "bench-chat",
      created: 1_700_000_000,
      includeUsage: true,
    }),
  "Anthropic events": () => new AnthropicEventSink(writer, { id: "msg_bench", model: "bench-chat" }),
};

const results = new Map<string, number[]>();
for (let round = -1; round < rounds; round++) {
  for (const [name, make] of Object.entries(sinks)) {
    const start = process.cpuUsage();
    for (let i = 0; i < answers; i++) {
      const sink = make();
      for (const event of events) await sink.event(event);
      await sink.end(usage);
    }
    const used = process.cpuUsage(start);
    // The first round warms up and is not counted.
    if (round >= 0) results.set(name, [...(results.get(name) ?? []), (used.user + used.system) / answers]);
  }
}
if (written === 0) throw new Error("nothing was written");
console.log(`µs of CPU per answer of 8 events, median (min to max) of ${rounds} rounds of ${answers}:`);
for (const [name, figures] of results) {
  const range = `${Math.min(...figures).toFixed(2)} to ${Math.max(...figures).toFixed(2)}`;
  console.log(`  ${name.padEnd(18)} ${median(figures).toFixed(2)} (${range})`);
}
