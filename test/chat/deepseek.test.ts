import Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { chatLedger, lastChatCost, openAiClient, PRICE, quotaOf, SIM_KEY } from "./harness.js";

const REASONER = "deepseek-reasoner";
const CHAT = "deepseek-chat";

/** DeepSeek's answer to a request, asked of the simulated upstream directly: what the gateway must pass on. */
async function upstreamAnswer(sim: Simulator, model: string, prompt: string) {
  const res = await fetch(`${sim.url}/deepseek/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${SIM_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }] }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    choices: Array<{ message: { content: string; reasoning_content?: string } }>;
    usage: {
      prompt_tokens: number;
      completion_tokens: number;
      prompt_cache_hit_tokens: number;
      completion_tokens_details: { reasoning_tokens: number };
    };
  };
}

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`the deepseek channel type [${kind}]`, () => {
    let sim: Simulator;
    let gw: TestGateway;
    let user: { userId: number; key: string };
    let client: OpenAI;

    beforeAll(async () => {
      sim = await startSimulator({ keys: [SIM_KEY] });
      gw = await startTestGateway(kind, { logLevel: "warn" });
      for (const name of [REASONER, CHAT]) {
        await gw.gateway.ctx.prices.setPrice({ kind: "content", name, ...PRICE });
      }
      await gw.createChannel({
        type: "deepseek",
        baseUrl: `${sim.url}/deepseek`,
        key: SIM_KEY,
        models: [REASONER, CHAT],
      });
      user = await gw.createUser({ quota: 50_000_000 });
      client = openAiClient(gw, user.key);
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    it("is a chat type of the registry, listed by the admin API", async () => {
      const types = (await gw.admin("GET", "/channel-types")).body.data as Array<Record<string, unknown>>;
      expect(types.find((t) => t.type === "deepseek")).toMatchObject({ capabilities: ["chat"], task_platforms: [] });
      const models = await client.models.list();
      expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining([REASONER, CHAT]));
    });

    it("passes the reasoning on as reasoning_content, and bills it as output", async () => {
      const prompt = "Why is the sky blue? [cached]";
      const upstream = await upstreamAnswer(sim, REASONER, prompt);
      expect(upstream.choices[0]?.message.reasoning_content).toBeTruthy();
      const answer = await client.chat.completions.create({
        model: REASONER,
        messages: [{ role: "user", content: prompt }],
      });
      const message = answer.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
      expect(message.content).toBe(upstream.choices[0]?.message.content);
      expect(message.reasoning_content).toBe(upstream.choices[0]?.message.reasoning_content);
      expect(answer.usage).toMatchObject({
        prompt_tokens: upstream.usage.prompt_tokens,
        completion_tokens: upstream.usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: upstream.usage.prompt_cache_hit_tokens },
        completion_tokens_details: { reasoning_tokens: upstream.usage.completion_tokens_details.reasoning_tokens },
      });
      expect(upstream.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
      expect(upstream.usage.prompt_cache_hit_tokens).toBeGreaterThan(0);
      const { cost, kinds } = await lastChatCost(gw, user.userId);
      expect(kinds).toEqual(["charge", "settle"]);
      expect(cost).toBe(
        quotaOf({
          input: upstream.usage.prompt_tokens,
          output: upstream.usage.completion_tokens,
          cached: upstream.usage.prompt_cache_hit_tokens,
        }),
      );
    });

    it("streams the reasoning as reasoning_content deltas before the answer, and bills the usage reported", async () => {
      const prompt = "Count the primes below twenty.";
      const upstream = await upstreamAnswer(sim, REASONER, prompt);
      const stream = await client.chat.completions.create({
        model: REASONER,
        messages: [{ role: "user", content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const order: string[] = [];
      let reasoning = "";
      let content = "";
      let usage: OpenAI.CompletionUsage | null | undefined = null;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as
          | (OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string })
          | undefined;
        if (delta?.reasoning_content) {
          reasoning += delta.reasoning_content;
          order.push("reasoning");
        }
        if (delta?.content) {
          content += delta.content;
          order.push("content");
        }
        if (chunk.usage) usage = chunk.usage;
      }
      expect(reasoning).toBe(upstream.choices[0]?.message.reasoning_content);
      expect(content).toBe(upstream.choices[0]?.message.content);
      expect(order.indexOf("content")).toBeGreaterThan(order.lastIndexOf("reasoning"));
      expect(order.filter((o) => o === "reasoning").length).toBeGreaterThan(1);
      expect(usage?.completion_tokens_details?.reasoning_tokens).toBe(
        upstream.usage.completion_tokens_details.reasoning_tokens,
      );
      const { cost } = await lastChatCost(gw, user.userId);
      expect(cost).toBe(
        quotaOf({ input: upstream.usage.prompt_tokens, output: upstream.usage.completion_tokens, cached: 0 }),
      );
    });

    it("counts the reasoning produced when a stream reports no usage", async () => {
      const prompt = "Explain tides. [nousage]";
      const stream = await client.chat.completions.create({
        model: REASONER,
        messages: [{ role: "user", content: prompt }],
        stream: true,
      });
      let produced = 0;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string | null } | undefined;
        produced += (delta?.reasoning_content ?? "").length + (delta?.content ?? "").length;
      }
      const { cost } = await lastChatCost(gw, user.userId);
      expect(cost).toBe(quotaOf({ input: Math.ceil(prompt.length / 4), output: Math.ceil(produced / 4), cached: 0 }));
    });

    it("never sends an earlier answer's reasoning_content back upstream, which DeepSeek refuses", async () => {
      const previous = {
        role: "assistant",
        content: "Rayleigh scattering.",
        reasoning_content: "Short waves scatter more.",
      };
      const answer = await client.chat.completions.create({
        model: REASONER,
        messages: [
          { role: "user", content: "Why is the sky blue?" },
          previous as OpenAI.ChatCompletionAssistantMessageParam,
          { role: "user", content: "And sunsets?" },
        ],
      });
      expect(answer.choices[0]?.message.content).toBeTruthy();
      const sent = sim.received.filter((r) => r.protocol === "deepseek").at(-1)?.body as { messages: unknown[] };
      expect(sent.messages).toHaveLength(3);
      expect(JSON.stringify(sent.messages)).not.toContain("reasoning_content");
    });

    it("answers without reasoning_content for a model that shows none", async () => {
      const answer = await client.chat.completions.create({ model: CHAT, messages: [{ role: "user", content: "Hi" }] });
      expect(answer.choices[0]?.message.content).toBeTruthy();
      expect(answer.choices[0]?.message).not.toHaveProperty("reasoning_content");
    });

    it("refuses what DeepSeek cannot carry with a 400 naming the field, charging nothing", async () => {
      const before = (await chatLedger(gw, user.userId)).length;
      const calls = sim.received.length;
      await expect(
        client.chat.completions.create({ model: REASONER, messages: [{ role: "user", content: "Hi" }], n: 2 }),
      ).rejects.toMatchObject({ status: 400, error: { param: "n" } });
      await expect(
        client.chat.completions.create({
          model: REASONER,
          messages: [{ role: "user", content: "Hi" }],
          response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
        }),
      ).rejects.toMatchObject({ status: 400, error: { param: "response_format" } });
      const hi = { model: REASONER, messages: [{ role: "user" as const, content: "Hi" }] };
      for (const [param, value] of [
        ["reasoning_effort", "high"],
        ["service_tier", "flex"],
        ["modalities", ["text", "audio"]],
      ] as const) {
        await expect(client.chat.completions.create({ ...hi, [param]: value })).rejects.toMatchObject({
          status: 400,
          error: { param },
        });
      }
      expect((await chatLedger(gw, user.userId)).length).toBe(before);
      expect(sim.received.length).toBe(calls);
    });

    it("sends the output limit as max_tokens, the one name DeepSeek takes, and leaves store and metadata out", async () => {
      await client.chat.completions.create({
        model: CHAT,
        messages: [{ role: "user", content: "Hi" }],
        max_completion_tokens: 300,
        store: true,
        metadata: { team: "weather" },
      });
      const sent = sim.received.filter((r) => r.protocol === "deepseek").at(-1)?.body as Record<string, unknown>;
      expect(sent.max_tokens).toBe(300);
      expect(sent).not.toHaveProperty("max_completion_tokens");
      expect(sent).not.toHaveProperty("store");
      expect(sent).not.toHaveProperty("metadata");
    });

    it("gives Anthropic's client the reasoning as a thinking block, whole and streamed", async () => {
      const prompt = "Why do leaves turn red?";
      const upstream = await upstreamAnswer(sim, REASONER, prompt);
      const anthropic = new Anthropic({ apiKey: user.key, baseURL: gw.url, maxRetries: 0 });
      const message = await anthropic.messages.create({
        model: REASONER,
        max_tokens: 1024,
        messages: [{ role: "user", content: prompt }],
      });
      expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
      expect(message.content[0]).toMatchObject({
        type: "thinking",
        thinking: upstream.choices[0]?.message.reasoning_content,
      });
      expect(message.content[1]).toMatchObject({ type: "text", text: upstream.choices[0]?.message.content });
      const streamed = await anthropic.messages
        .stream({ model: REASONER, max_tokens: 1024, messages: [{ role: "user", content: prompt }] })
        .finalMessage();
      expect(streamed.content).toEqual(message.content);
      expect(streamed.usage.output_tokens).toBe(upstream.usage.completion_tokens);
    });
  });
}
