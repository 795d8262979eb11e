import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simulatedToolArguments } from "../../src/simulator/chat-script.js";
import { solidPng } from "../../src/simulator/gemini-image.js";
import { simulatedChunkText } from "../../src/simulator/gemini-text.js";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  CHAT_MODEL,
  type ChatHarness,
  chatRequestLogs,
  lastChatCost,
  quotaOf,
  startChatHarness,
  UPSTREAM_TYPES,
  type UpstreamType,
} from "./harness.js";

function expectedText(prompt: string, chunks = 3): string {
  let text = "";
  for (let i = 0; i < chunks; i++) text += simulatedChunkText(prompt, i, i === chunks - 1);
  return text;
}

const WEATHER_TOOL: Anthropic.Tool = {
  name: "lookup_weather",
  description: "Weather of a city",
  input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};

/** What an Anthropic usage costs: its input_tokens leave out the cached part. */
function usageCost(usage: Anthropic.Usage) {
  const cached = usage.cache_read_input_tokens ?? 0;
  return quotaOf({ input: usage.input_tokens + cached, output: usage.output_tokens, cached });
}

function clientFor(f: ChatHarness, key = f.user.key): Anthropic {
  return new Anthropic({ apiKey: key, baseURL: f.gw.url, maxRetries: 0 });
}

const STORES: StoreKind[] = ["sqlite", "postgres"];

for (const type of UPSTREAM_TYPES as readonly UpstreamType[]) {
  for (const kind of STORES) {
    describe.skipIf(kind === "postgres" && !HAS_PG)(`Anthropic messages over ${type} [${kind}]`, () => {
      let f: ChatHarness;
      let client: Anthropic;
      let hold: Promise<void> | null = null;
      const released: Array<() => void> = [];
      beforeAll(async () => {
        const text = { beforeChunk: (index: number) => (index === 2 && hold ? hold : undefined) };
        f = await startChatHarness(
          kind,
          type,
          type === "openai-chat"
            ? { openaiChat: text }
            : type === "anthropic"
              ? { anthropic: text }
              : { gemini: { text } },
        );
        client = clientFor(f);
      });
      afterAll(async () => {
        for (const r of released) r();
        await f?.close();
      });

      it("creates a message with the upstream's text and bills its usage to the unit", async () => {
        const prompt = `Name three harbours (${type})`;
        const message = await client.messages.create({
          model: CHAT_MODEL,
          max_tokens: 500,
          messages: [{ role: "user", content: prompt }],
        });
        expect(message.type).toBe("message");
        expect(message.model).toBe(CHAT_MODEL);
        expect(message.stop_reason).toBe("end_turn");
        expect(message.content).toEqual([{ type: "text", text: expectedText(prompt) }]);
        expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(
          Math.ceil(prompt.length / 4),
        );
        const { cost, kinds } = await lastChatCost(f.gw, f.user.userId);
        expect(kinds).toEqual(["charge", "settle"]);
        expect(cost).toBe(usageCost(message.usage));
        const logs = await chatRequestLogs(f.gw);
        expect(Number(logs[logs.length - 1]?.quota)).toBe(cost);
      });

      it("streams the real event sequence, event by event", async () => {
        const prompt = `Stream a song (${type})`;
        let release = () => {};
        hold = new Promise<void>((resolve) => {
          release = resolve;
        });
        released.push(release);
        const stream = client.messages.stream({
          model: CHAT_MODEL,
          max_tokens: 500,
          messages: [{ role: "user", content: prompt }],
        });
        const types: string[] = [];
        let text = "";
        let startInput = -1;
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === "message_start") startInput = event.message.usage.input_tokens;
          if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
            text += event.delta.text;
            // The upstream holds its third piece until the first one reached the client.
            hold = null;
            release();
          }
        }
        const final = await stream.finalMessage();
        expect(text).toBe(expectedText(prompt));
        expect(types[0]).toBe("message_start");
        expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
        expect(types.filter((t) => t === "content_block_delta").length).toBeGreaterThanOrEqual(2);
        expect(final.stop_reason).toBe("end_turn");
        // message_start carries the input, as Anthropic's does: the upstream's own figure where its
        // stream reports it at the start, else the gateway's count of the request (never 0).
        if (type === "anthropic") expect(startInput).toBe(final.usage.input_tokens);
        else expect(startInput).toBeGreaterThan(0);
        expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(final.usage));
      });

      it("uses tools with exactly the upstream's arguments, plain and streamed", async () => {
        const prompt = `Weather in Bergen? [tool] (${type})`;
        const message = await client.messages.create({
          model: CHAT_MODEL,
          max_tokens: 500,
          tools: [WEATHER_TOOL],
          messages: [{ role: "user", content: prompt }],
        });
        expect(message.stop_reason).toBe("tool_use");
        const use = message.content.find((b) => b.type === "tool_use");
        expect(use?.type === "tool_use" && use.name).toBe("lookup_weather");
        expect(use?.type === "tool_use" && JSON.stringify(use.input)).toBe(simulatedToolArguments(prompt));
        expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(message.usage));

        const stream = client.messages.stream({
          model: CHAT_MODEL,
          max_tokens: 500,
          tools: [WEATHER_TOOL],
          messages: [{ role: "user", content: prompt }],
        });
        let json = "";
        stream.on("inputJson", (delta) => {
          json += delta;
        });
        const final = await stream.finalMessage();
        const streamed = final.content.find((b) => b.type === "tool_use");
        expect(final.stop_reason).toBe("tool_use");
        expect(json).toBe(simulatedToolArguments(prompt));
        expect(streamed?.type === "tool_use" && JSON.stringify(streamed.input)).toBe(simulatedToolArguments(prompt));

        const next = await client.messages.create({
          model: CHAT_MODEL,
          max_tokens: 500,
          tools: [WEATHER_TOOL],
          messages: [
            { role: "user", content: "Weather in Bergen?" },
            { role: "assistant", content: [use as Anthropic.ToolUseBlock] },
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: (use as Anthropic.ToolUseBlock).id, content: "rain, 12 degrees" },
              ],
            },
          ],
        });
        expect(next.stop_reason).toBe("end_turn");
      });

      it("takes image blocks", async () => {
        const png = solidPng(8, 8, [1, 2, 3]);
        const before = f.sim.received.length;
        const message = await client.messages.create({
          model: CHAT_MODEL,
          max_tokens: 500,
          messages: [
            {
              role: "user",
              content: [
                { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
                { type: "text", text: "What colour is this?" },
              ],
            },
          ],
        });
        expect(message.content[0]?.type).toBe("text");
        expect(JSON.stringify(f.sim.received.slice(before).map((r) => r.body))).toContain(png.toString("base64"));
      });

      it("takes the token as x-api-key or as a Bearer token", async () => {
        const bearer = new Anthropic({ authToken: f.user.key, apiKey: null, baseURL: f.gw.url, maxRetries: 0 });
        const message = await bearer.messages.create({
          model: CHAT_MODEL,
          max_tokens: 100,
          messages: [{ role: "user", content: "Who am I?" }],
        });
        expect(message.content[0]?.type).toBe("text");
      });

      it("counts tokens without charging", async () => {
        const before = await f.gw.balance(f.user.userId);
        const counted = await client.messages.countTokens({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: "How many tokens is this sentence?" }],
        });
        expect(counted.input_tokens).toBe(Math.ceil("How many tokens is this sentence?".length / 4));
        expect(await f.gw.balance(f.user.userId)).toBe(before);
      });

      it("answers errors as the SDK's own error classes", async () => {
        const missing = await client.messages
          .create({ model: CHAT_MODEL, messages: [{ role: "user", content: "hi" }] } as never)
          .catch((e: unknown) => e);
        expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
        expect(JSON.stringify((missing as InstanceType<typeof Anthropic.BadRequestError>).error)).toContain(
          "max_tokens",
        );
        await expect(
          client.messages.create({
            model: "no-such-model",
            max_tokens: 10,
            messages: [{ role: "user", content: "hi" }],
          }),
        ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
        await expect(
          clientFor(f, "sk-wrong").messages.create({
            model: CHAT_MODEL,
            max_tokens: 10,
            messages: [{ role: "user", content: "hi" }],
          }),
        ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
        await expect(
          client.messages.create({
            model: CHAT_MODEL,
            max_tokens: 10,
            messages: [{ role: "user", content: "slow down [429]" }],
          }),
        ).rejects.toBeInstanceOf(Anthropic.RateLimitError);
        const failed = await lastChatCost(f.gw, f.user.userId);
        expect(failed.kinds).toEqual(["charge", "refund"]);
        expect(failed.cost).toBe(0);
      });
    });
  }
}
