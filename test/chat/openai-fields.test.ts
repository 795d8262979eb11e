import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  CHAT_MODEL,
  type ChatHarness,
  chatLedger,
  lastChatCost,
  openAiClient,
  startChatHarness,
  UPSTREAM_TYPES,
  type UpstreamType,
} from "./harness.js";

// Every field of the OpenAI surface either reaches the upstream (as it is, or translated) or is
// refused with a 400 naming it, before anything is charged: never dropped on the way.

type Params = OpenAI.ChatCompletionCreateParamsNonStreaming;

const WEATHER = {
  name: "lookup_weather",
  description: "Weather of a city",
  parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};

const ask = (content: string): Params => ({ model: CHAT_MODEL, messages: [{ role: "user", content }] });

const STORES: StoreKind[] = ["sqlite", "postgres"];

for (const type of UPSTREAM_TYPES as readonly UpstreamType[]) {
  for (const kind of STORES) {
    describe.skipIf(kind === "postgres" && !HAS_PG)(`OpenAI chat fields over ${type} [${kind}]`, () => {
      let f: ChatHarness;
      let client: OpenAI;
      beforeAll(async () => {
        f = await startChatHarness(kind, type);
        client = openAiClient(f.gw, f.user.key);
      });
      afterAll(async () => {
        await f?.close();
      });

      /** The body the upstream received for the request, which must have been answered. */
      async function sent(params: Params): Promise<Record<string, any>> {
        const before = f.sim.received.length;
        await client.chat.completions.create(params);
        expect(f.sim.received.length).toBe(before + 1);
        return f.sim.received[before]?.body as Record<string, any>;
      }

      /** The request is refused with a 400 naming `param`, the upstream is not called, nothing is charged. */
      async function refused(params: Params, param: string) {
        const calls = f.sim.received.length;
        const ledger = await chatLedger(f.gw, f.user.userId);
        const err = await client.chat.completions.create(params).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
        expect(f.sim.received.length).toBe(calls);
        expect(await chatLedger(f.gw, f.user.userId)).toEqual(ledger);
      }

      it("translates the legacy functions and function_call into tools and a tool choice", async () => {
        const body = await sent({
          ...ask("Weather in Oslo?"),
          functions: [WEATHER],
          function_call: { name: "lookup_weather" },
        });
        if (type === "openai-chat") {
          expect(body.tools).toEqual([{ type: "function", function: WEATHER }]);
          expect(body.tool_choice).toEqual({ type: "function", function: { name: "lookup_weather" } });
          expect(body.functions).toBeUndefined();
        } else if (type === "anthropic") {
          expect(body.tools[0]).toMatchObject({ name: "lookup_weather", input_schema: WEATHER.parameters });
          expect(body.tool_choice).toEqual({ type: "tool", name: "lookup_weather" });
        } else {
          expect(body.tools[0].functionDeclarations[0]).toMatchObject({ name: "lookup_weather" });
          expect(body.toolConfig.functionCallingConfig).toEqual({
            mode: "ANY",
            allowedFunctionNames: ["lookup_weather"],
          });
        }

        // Answered in the legacy form, whole and streamed.
        const legacy = { ...ask("Weather in Oslo?"), functions: [WEATHER], function_call: { name: "lookup_weather" } };
        const answer = await client.chat.completions.create(legacy);
        expect(answer.choices[0]?.finish_reason).toBe("function_call");
        expect(answer.choices[0]?.message.function_call?.name).toBe("lookup_weather");
        expect(answer.choices[0]?.message.tool_calls).toBeUndefined();
        const final = await client.chat.completions.stream({ ...legacy, stream: true }).finalChatCompletion();
        expect(final.choices[0]?.finish_reason).toBe("function_call");
        expect(final.choices[0]?.message.function_call).toEqual(answer.choices[0]?.message.function_call);

        // A legacy conversation: the assistant's function_call and the function's answer.
        const next = await sent({
          model: CHAT_MODEL,
          functions: [WEATHER],
          function_call: "auto",
          messages: [
            { role: "user", content: "Weather in Oslo?" },
            { role: "assistant", content: null, function_call: { name: "lookup_weather", arguments: "{}" } },
            { role: "function", name: "lookup_weather", content: "sunny" },
          ],
        });
        const wire = JSON.stringify(next);
        expect(wire).toContain("call_function_1");
        expect(wire).toContain("sunny");
        await refused(
          { ...ask("hi"), functions: [WEATHER], tools: [{ type: "function", function: WEATHER }] },
          "functions",
        );
      });

      it("carries reasoning_effort: as it is, or as a thinking budget", async () => {
        const body = await sent({ ...ask("Think hard"), reasoning_effort: "high", max_completion_tokens: 500 });
        if (type === "openai-chat") expect(body.reasoning_effort).toBe("high");
        if (type === "anthropic") {
          expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 24576 });
          expect(body.max_tokens).toBe(24576 + 500);
        }
        if (type === "gemini") expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576 });
        if (type === "anthropic") {
          await refused({ ...ask("Think"), reasoning_effort: "low", temperature: 0.2 }, "reasoning_effort");
        }
      });

      it("carries parallel_tool_calls, or refuses false where the upstream has no such setting", async () => {
        const params: Params = {
          ...ask("Weather in Oslo?"),
          tools: [{ type: "function", function: WEATHER }],
          parallel_tool_calls: false,
        };
        if (type === "gemini") return refused(params, "parallel_tool_calls");
        const body = await sent(params);
        if (type === "openai-chat") expect(body.parallel_tool_calls).toBe(false);
        else expect(body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
      });

      it("keeps the output limit under the names the client gave it", async () => {
        const completion = await sent({ ...ask("Limit me"), max_completion_tokens: 300 });
        const both = await sent({ ...ask("Limit me"), max_tokens: 200, max_completion_tokens: 300 });
        if (type === "openai-chat") {
          expect(completion.max_completion_tokens).toBe(300);
          expect(completion.max_tokens).toBeUndefined();
          expect([both.max_tokens, both.max_completion_tokens]).toEqual([200, 300]);
        } else if (type === "anthropic") {
          expect([completion.max_tokens, both.max_tokens]).toEqual([300, 300]);
        } else {
          expect([completion.generationConfig.maxOutputTokens, both.generationConfig.maxOutputTokens]).toEqual([
            300, 300,
          ]);
        }
      });

      it("passes OpenAI's own settings on unchanged, or refuses those that change the answer", async () => {
        const settings: Record<string, unknown> = {
          service_tier: "flex",
          prediction: { type: "content", content: "The weather is" },
          web_search_options: { search_context_size: "low" },
          modalities: ["text", "audio"],
        };
        const harmless = { store: true, metadata: { team: "weather" } };
        if (type === "openai-chat") {
          const body = await sent({ ...ask("Settings"), ...settings, ...harmless });
          expect(body).toMatchObject({ ...settings, ...harmless });
          return;
        }
        for (const [field, value] of Object.entries(settings)) {
          await refused({ ...ask("Settings"), [field]: value } as Params, field);
        }
        // store and metadata only keep the call in OpenAI's records: left out, the call answered.
        const body = await sent({ ...ask("Settings"), ...harmless, modalities: ["text"] });
        expect(JSON.stringify(body)).not.toContain("weather");
      });

      it("passes penalties to the upstreams that have them, and refuses them on Anthropic", async () => {
        const penalties = { frequency_penalty: 0.5, presence_penalty: -0.25 };
        if (type === "anthropic") {
          await refused({ ...ask("Vary"), frequency_penalty: 0.5 }, "frequency_penalty");
          await refused({ ...ask("Vary"), presence_penalty: -0.25 }, "presence_penalty");
          // 0 is no penalty: nothing to refuse, nothing sent.
          const body = await sent({ ...ask("Vary"), frequency_penalty: 0, presence_penalty: 0 });
          expect(JSON.stringify(body)).not.toContain("penalty");
          return;
        }
        const body = await sent({ ...ask("Vary"), ...penalties });
        if (type === "gemini") {
          expect(body.generationConfig).toMatchObject({ frequencyPenalty: 0.5, presencePenalty: -0.25 });
        } else {
          expect(body).toMatchObject(penalties);
        }
      });

      it("gives structured output on every upstream: Anthropic's through a forced tool", async () => {
        const schema = {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "integer" }, exact: { type: "boolean" } },
          required: ["query"],
        };
        const format = { type: "json_schema" as const, json_schema: { name: "search_plan", schema, strict: true } };
        const before = f.sim.received.length;
        const answer = await client.chat.completions.create({ ...ask("Plan a search"), response_format: format });
        const body = f.sim.received[before]?.body as Record<string, any>;
        const content = answer.choices[0]?.message.content ?? "";
        expect(answer.choices[0]?.finish_reason).toBe("stop");
        expect(answer.choices[0]?.message.tool_calls ?? []).toEqual([]);
        if (type === "anthropic") {
          expect(body.tools).toEqual([{ name: "search_plan", description: "Answer with this.", input_schema: schema }]);
          expect(body.tool_choice).toEqual({ type: "tool", name: "search_plan" });
          // The simulated model calls a forced tool with its usual arguments: the answer is their JSON.
          expect(JSON.parse(content)).toMatchObject({ limit: 3, exact: true });
          const stream = await client.chat.completions.create({
            ...ask("Plan a search"),
            response_format: format,
            stream: true,
          });
          let streamed = "";
          let finish: string | null = null;
          for await (const chunk of stream) {
            streamed += chunk.choices[0]?.delta.content ?? "";
            expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
            finish = chunk.choices[0]?.finish_reason ?? finish;
          }
          expect(JSON.parse(streamed)).toEqual(JSON.parse(content));
          expect(finish).toBe("stop");
          const object = await sent({ ...ask("Plan a search"), response_format: { type: "json_object" } });
          expect(object.tool_choice).toEqual({ type: "tool", name: "json_answer" });
          await refused(
            { ...ask("Plan"), response_format: format, tools: [{ type: "function", function: WEATHER }] },
            "response_format",
          );
          await refused(
            {
              ...ask("Plan"),
              response_format: { type: "json_schema", json_schema: { name: "list", schema: { type: "array" } } },
            },
            "response_format",
          );
        } else {
          // The schema travels as the upstream's own setting (response_format, responseJsonSchema).
          expect(JSON.stringify(body)).toContain('"exact":{"type":"boolean"}');
          expect(content.length).toBeGreaterThan(0);
        }
      });

      it("answers n choices from a Gemini model through candidateCount", async () => {
        if (type !== "gemini") return;
        const answer = await client.chat.completions.create({ ...ask("Three ideas"), n: 3 });
        expect(answer.choices.map((c) => c.index)).toEqual([0, 1, 2]);
        const texts = answer.choices.map((c) => c.message.content ?? "");
        expect(new Set(texts).size).toBe(3);
        const stream = await client.chat.completions.create({ ...ask("Three streamed ideas"), n: 3, stream: true });
        const streamed = new Map<number, string>();
        for await (const chunk of stream) {
          for (const choice of chunk.choices) {
            streamed.set(choice.index, (streamed.get(choice.index) ?? "") + (choice.delta.content ?? ""));
          }
        }
        expect([...streamed.keys()].sort()).toEqual([0, 1, 2]);
        expect([...streamed.values()].every((text) => text.length > 0)).toBe(true);
      });

      it("fails a call answered with fewer choices than n, and refunds it", async () => {
        if (type !== "gemini") return;
        // `[one candidate]`: the simulated model answers one candidate whatever candidateCount asks.
        const err = await client.chat.completions
          .create({ ...ask("Two ideas [one candidate]"), n: 2 })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.APIError);
        expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
        expect(String((err as Error).message)).toContain("1 of the 2 choices");
        const failed = await lastChatCost(f.gw, f.user.userId);
        expect(failed.kinds).toEqual(["charge", "refund"]);
        expect(failed.cost).toBe(0);

        const stream = await client.chat.completions.create({
          ...ask("Two streamed ideas [one candidate]"),
          n: 2,
          stream: true,
        });
        const streamed = await (async () => {
          for await (const _chunk of stream) {
            // read to the end
          }
        })().catch((e: unknown) => e);
        expect(streamed).toBeInstanceOf(OpenAI.APIError);
        expect(String((streamed as Error).message)).toContain("1 of the 2 choices");
      });
    });
  }
}
