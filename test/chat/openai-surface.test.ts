import OpenAI from "openai";
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
  openAiClient,
  quotaOf,
  serveImage,
  startChatHarness,
  UPSTREAM_TYPES,
  type UpstreamType,
} from "./harness.js";

/** The text the simulated model answers to a one-message prompt (three chunks). */
function expectedText(prompt: string, chunks = 3): string {
  let text = "";
  for (let i = 0; i < chunks; i++) text += simulatedChunkText(prompt, i, i === chunks - 1);
  return text;
}

const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  },
};

function usageCost(usage: OpenAI.CompletionUsage | null | undefined) {
  return quotaOf({
    input: usage?.prompt_tokens ?? -1,
    output: usage?.completion_tokens ?? -1,
    cached: usage?.prompt_tokens_details?.cached_tokens ?? 0,
  });
}

const STORES: StoreKind[] = ["sqlite", "postgres"];

for (const type of UPSTREAM_TYPES as readonly UpstreamType[]) {
  for (const kind of STORES) {
    describe.skipIf(kind === "postgres" && !HAS_PG)(`OpenAI chat completions over ${type} [${kind}]`, () => {
      let f: ChatHarness;
      let client: OpenAI;
      let picture: { url: string; close(): Promise<void> };
      const released: Array<() => void> = [];
      let hold: Promise<void> | null = null;
      beforeAll(async () => {
        const beforeChunk = (index: number) => (index === 2 && hold ? hold : undefined);
        const text = { beforeChunk };
        f = await startChatHarness(
          kind,
          type,
          type === "openai-chat"
            ? { openaiChat: text }
            : type === "anthropic"
              ? { anthropic: text }
              : { gemini: { text } },
          { images: { allowPrivateUrls: true } },
        );
        client = openAiClient(f.gw, f.user.key);
        picture = await serveImage(solidPng(16, 16, [10, 200, 30]));
      });
      afterAll(async () => {
        for (const r of released) r();
        await picture?.close();
        await f?.close();
      });

      it("answers a plain request with the upstream's text, and bills its usage to the unit", async () => {
        const prompt = `Name three rivers (${type})`;
        const answer = await client.chat.completions.create({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: prompt }],
        });
        expect(answer.object).toBe("chat.completion");
        expect(answer.model).toBe(CHAT_MODEL);
        expect(answer.choices[0]?.message.content).toBe(expectedText(prompt));
        expect(answer.choices[0]?.finish_reason).toBe("stop");
        expect(answer.usage?.prompt_tokens).toBe(Math.ceil(prompt.length / 4));
        expect(answer.usage?.total_tokens).toBe(
          (answer.usage?.prompt_tokens ?? 0) + (answer.usage?.completion_tokens ?? 0),
        );
        const { cost, kinds } = await lastChatCost(f.gw, f.user.userId);
        expect(kinds).toEqual(["charge", "settle"]);
        expect(cost).toBe(usageCost(answer.usage));
        const logs = await chatRequestLogs(f.gw);
        const row = logs.find((r) => r.request_id === answer.id.replace("chatcmpl-", ""));
        expect(row?.status).toBe(200);
        expect(Number(row?.quota)).toBe(cost);
        expect(Number(row?.prompt_tokens)).toBe(answer.usage?.prompt_tokens);
      });

      it("streams chunk by chunk, ends with [DONE], and sends the usage chunk when asked", async () => {
        const prompt = `Stream a poem (${type})`;
        let release = () => {};
        hold = new Promise<void>((resolve) => {
          release = resolve;
        });
        released.push(release);
        const stream = await client.chat.completions.create({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: prompt }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = "";
        let usage: OpenAI.CompletionUsage | null | undefined = null;
        let finish: string | null = null;
        let chunks = 0;
        for await (const chunk of stream) {
          chunks += 1;
          // The upstream holds its third chunk until the first reached the client.
          if (chunks === 1) {
            hold = null;
            release();
          }
          text += chunk.choices[0]?.delta.content ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
          if (chunk.usage) usage = chunk.usage;
        }
        expect(text).toBe(expectedText(prompt));
        expect(finish).toBe("stop");
        expect(chunks).toBeGreaterThanOrEqual(4);
        expect(usage?.prompt_tokens).toBe(Math.ceil(prompt.length / 4));
        expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(usage));
      });

      it("calls tools with exactly the upstream's arguments, plain and streamed", async () => {
        const prompt = `What is the weather in Oslo? [tool] (${type})`;
        const answer = await client.chat.completions.create({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: prompt }],
          tools: [WEATHER_TOOL],
        });
        const call = answer.choices[0]?.message.tool_calls?.[0];
        expect(answer.choices[0]?.finish_reason).toBe("tool_calls");
        expect(call?.type === "function" && call.function.name).toBe("lookup_weather");
        expect(call?.type === "function" && call.function.arguments).toBe(simulatedToolArguments(prompt));
        expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(answer.usage));

        const stream = client.chat.completions.stream({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: prompt }],
          tools: [WEATHER_TOOL],
          stream_options: { include_usage: true },
        });
        const final = await stream.finalChatCompletion();
        const streamed = final.choices[0]?.message.tool_calls?.[0];
        expect(final.choices[0]?.finish_reason).toBe("tool_calls");
        expect(streamed?.type === "function" && streamed.function.name).toBe("lookup_weather");
        expect(streamed?.type === "function" && streamed.function.arguments).toBe(simulatedToolArguments(prompt));

        // The tool's answer goes back, and the model answers in text.
        const next = await client.chat.completions.create({
          model: CHAT_MODEL,
          messages: [
            { role: "user", content: prompt.replace("[tool]", "") },
            {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: call?.id ?? "", type: "function", function: { name: "lookup_weather", arguments: "{}" } },
              ],
            },
            { role: "tool", tool_call_id: call?.id ?? "", content: "sunny, 21 degrees" },
          ],
          tools: [WEATHER_TOOL],
        });
        expect(next.choices[0]?.finish_reason).toBe("stop");
        expect(next.choices[0]?.message.content).not.toBe("");
      });

      it("sends image parts given as data URLs and as http URLs to the upstream inline", async () => {
        const png = solidPng(8, 8, [200, 10, 10]);
        for (const url of [`data:image/png;base64,${png.toString("base64")}`, picture.url]) {
          const before = f.sim.received.length;
          const answer = await client.chat.completions.create({
            model: CHAT_MODEL,
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: "Describe this picture" },
                  { type: "image_url", image_url: { url } },
                ],
              },
            ],
          });
          expect(answer.choices[0]?.message.content).not.toBe("");
          const sent = JSON.stringify(f.sim.received.slice(before).map((r) => r.body));
          const bytes = url.startsWith("data:") ? png : solidPng(16, 16, [10, 200, 30]);
          expect(sent).toContain(bytes.toString("base64"));
          expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(answer.usage));
        }
      });

      it("answers errors as the SDK's own error classes, and refunds a failed call", async () => {
        await expect(
          client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
        ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
        const bad = await client.chat.completions
          .create({ model: CHAT_MODEL, messages: [{ role: "wizard", content: "hi" }] as never })
          .catch((e: unknown) => e);
        expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
        expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("messages[0].role");
        await expect(
          openAiClient(f.gw, "sk-wrong").chat.completions.create({
            model: CHAT_MODEL,
            messages: [{ role: "user", content: "hi" }],
          }),
        ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
        await expect(
          client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: "user", content: "busy [429]" }] }),
        ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
        const failed = await lastChatCost(f.gw, f.user.userId);
        expect(failed.kinds).toEqual(["charge", "refund"]);
        expect(failed.cost).toBe(0);
      });

      it("answers n choices where the upstream can, and a 400 naming n where it cannot", async () => {
        const params = { model: CHAT_MODEL, messages: [{ role: "user" as const, content: "Two ideas" }], n: 2 };
        if (type === "anthropic") {
          const before = f.sim.received.length;
          const err = await client.chat.completions.create(params).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(OpenAI.BadRequestError);
          expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("n");
          // Structured output goes as a forced tool, which thinking excludes.
          const json = await client.chat.completions
            .create({ ...params, n: 1, response_format: { type: "json_object" }, reasoning_effort: "low" })
            .catch((e: unknown) => e);
          expect((json as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("response_format");
          expect(f.sim.received.length).toBe(before);
          return;
        }
        if (type === "gemini") {
          // Sent as candidateCount (a shorter answer than asked is a failure: openai-fields.test.ts).
          const answer = await client.chat.completions.create(params);
          const sent = f.sim.received[f.sim.received.length - 1]?.body as Record<string, any>;
          expect(sent.generationConfig.candidateCount).toBe(2);
          expect(answer.choices).toHaveLength(2);
          return;
        }
        const answer = await client.chat.completions.create(params);
        expect(answer.choices.map((c) => c.index)).toEqual([0, 1]);
        expect(answer.choices[0]?.message.content).not.toBe(answer.choices[1]?.message.content);
        expect((await lastChatCost(f.gw, f.user.userId)).cost).toBe(usageCost(answer.usage));
      });

      it("ends a stream cut after its first chunk with an error event, billing what was produced", async () => {
        const stream = await client.chat.completions.create({
          model: CHAT_MODEL,
          messages: [{ role: "user", content: "cut me [chunks=4] [cut]" }],
          stream: true,
        });
        let text = "";
        const err = await (async () => {
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
        })().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.APIError);
        expect(text.length).toBeGreaterThan(0);
        const { cost, kinds } = await lastChatCost(f.gw, f.user.userId);
        expect(kinds).toEqual(["charge", "settle"]);
        expect(cost).toBeGreaterThan(0);
      });
    });
  }
}
