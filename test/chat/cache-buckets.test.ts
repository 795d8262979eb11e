import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreKind } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import {
  CHAT_MODEL,
  type ChatHarness,
  chatRequestLogs,
  lastChatCost,
  openAiClient,
  startChatHarness,
} from "./harness.js";

// Claude Sonnet's price sheet, per million tokens: $3 input, $15 output, $3.75 a 5-minute cache
// write, $6 a 1-hour one, $0.30 a cache read. 500,000 quota per unit, ratios 1.
const SONNET = { input: 3, output: 15, cacheWrite5m: 3.75, cacheWrite1h: 6, cacheRead: 0.3 };

/** A bill by hand: each count at its rate, summed, to quota, rounded up once. */
function byHand(parts: [tokens: number, rate: number][]): number {
  const perMillion = parts.reduce((sum, [tokens, rate]) => sum + tokens * rate, 0);
  return Math.ceil(Math.round((perMillion / 1e6) * 500_000 * 1e6) / 1e6);
}

const STORES: StoreKind[] = ["sqlite", "postgres"];

for (const kind of STORES) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`cache writes and reads of an Anthropic upstream [${kind}]`, () => {
    let f: ChatHarness;
    let client: Anthropic;
    beforeAll(async () => {
      f = await startChatHarness(kind, "anthropic");
      await f.gw.gateway.ctx.prices.setPrice({ kind: "content", name: CHAT_MODEL, rates: SONNET });
      client = new Anthropic({ apiKey: f.user.key, baseURL: f.gw.url, maxRetries: 0 });
    });
    afterAll(async () => {
      await f?.close();
    });

    it("bills a 1-hour cache write at 2x and the next read of it at 0.1x, and tells the client both", async () => {
      const prompt = "[cache-1h] The long system prompt of an agent, sent again and again";
      const first = await client.messages.create({
        model: CHAT_MODEL,
        max_tokens: 300,
        messages: [{ role: "user", content: prompt }],
      });
      const written = first.usage.cache_creation_input_tokens ?? 0;
      expect(written).toBeGreaterThan(0);
      expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: written });
      expect(first.usage.cache_read_input_tokens).toBe(0);
      expect(first.usage.input_tokens + written).toBe(Math.ceil(prompt.length / 4));
      const firstCost = await lastChatCost(f.gw, f.user.userId);
      expect(firstCost.cost).toBe(
        byHand([
          [first.usage.input_tokens, 3],
          [written, 6],
          [first.usage.output_tokens, 15],
        ]),
      );

      // The same prompt again, streamed: message_start carries the read.
      const stream = client.messages.stream({
        model: CHAT_MODEL,
        max_tokens: 300,
        messages: [{ role: "user", content: prompt }],
      });
      let startUsage: Anthropic.Usage | null = null;
      stream.on("streamEvent", (event) => {
        if (event.type === "message_start") startUsage = event.message.usage;
      });
      const second = await stream.finalMessage();
      expect(startUsage).toMatchObject({ cache_read_input_tokens: written, cache_creation_input_tokens: 0 });
      expect(second.usage.cache_read_input_tokens).toBe(written);
      const secondCost = await lastChatCost(f.gw, f.user.userId);
      expect(secondCost.cost).toBe(
        byHand([
          [second.usage.input_tokens, 3],
          [written, 0.3],
          [second.usage.output_tokens, 15],
        ]),
      );
      expect(secondCost.cost).toBeLessThan(firstCost.cost);

      const rows = (await chatRequestLogs(f.gw)).slice(-2);
      expect(
        rows.map((r) => [Number(r.cache_write_1h_tokens), Number(r.cache_read_tokens), Number(r.estimated)]),
      ).toEqual([
        [written, 0, 0],
        [0, written, 0],
      ]);
      // The sums stay what the console charts: every prompt token, the read part as cached.
      expect(Number(rows[0]?.prompt_tokens)).toBe(Math.ceil(prompt.length / 4));
      expect(Number(rows[1]?.cached_tokens)).toBe(written);
    });

    it("bills a 5-minute cache write at 1.25x through chat completions, the write shown in prompt_tokens", async () => {
      const prompt = "[cache-5m] Another long prompt, written to the cache for five minutes";
      const completion = await openAiClient(f.gw, f.user.key).chat.completions.create({
        model: CHAT_MODEL,
        messages: [{ role: "user", content: prompt }],
      });
      const usage = completion.usage!;
      const promptTokens = Math.ceil(prompt.length / 4);
      expect(usage.prompt_tokens).toBe(promptTokens);
      expect(usage.prompt_tokens_details?.cached_tokens).toBe(0);
      const written = promptTokens - 2;
      const { cost } = await lastChatCost(f.gw, f.user.userId);
      expect(cost).toBe(
        byHand([
          [2, 3],
          [written, 3.75],
          [usage.completion_tokens, 15],
        ]),
      );
      const row = (await chatRequestLogs(f.gw)).at(-1);
      expect([Number(row?.input_tokens), Number(row?.cache_write_5m_tokens)]).toEqual([2, written]);
    });
  });
}
