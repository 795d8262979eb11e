import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateTextTokens } from "../../src/core/metering/token-settlement.js";
import {
  CHAT_MODEL,
  type ChatHarness,
  chatLedger,
  lastChatCost,
  openAiClient,
  quotaOf,
  startChatHarness,
  UPSTREAM_TYPES,
} from "./harness.js";

/**
 * The rule for a stream that ends without a usage report (the upstream cut it, or its vendor omits
 * it), per upstream family: it settles to the gateway's count of what was delivered (the prompt as
 * four characters a token, the output from the text delivered), never to 0 and never above what
 * the request was held for.
 */
for (const type of UPSTREAM_TYPES) {
  describe(`a chat stream whose ${type} upstream reports no usage`, () => {
    let f: ChatHarness;
    beforeAll(async () => {
      f = await startChatHarness("sqlite", type);
    });
    afterAll(async () => {
      await f?.close();
    });

    async function streamed(prompt: string, maxTokens?: number) {
      const stream = await openAiClient(f.gw, f.user.key).chat.completions.create({
        model: CHAT_MODEL,
        messages: [{ role: "user", content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
        ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      });
      let text = "";
      let usageChunks = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) usageChunks += 1;
      }
      const rows = await chatLedger(f.gw, f.user.userId);
      const { reference, cost } = await lastChatCost(f.gw, f.user.userId);
      const held = -(rows.find((r) => r.reference === reference && r.kind === "charge")?.amount ?? 0);
      return { text, usageChunks, cost, held };
    }

    it("settles to the count of the prompt and the text delivered, not to 0", async () => {
      const prompt = `Tell me of the tides, without a word of usage [nousage] (${type})`;
      const { text, cost, held } = await streamed(prompt);
      expect(text.length).toBeGreaterThan(0);
      const estimate = quotaOf({
        input: estimateTextTokens(prompt.length),
        output: estimateTextTokens(text.length),
        cached: 0,
      });
      expect(cost).toBe(estimate);
      expect(cost).toBeGreaterThan(0);
      expect(cost).toBeLessThanOrEqual(held);
    });

    it("never settles an estimate above the hold", async () => {
      // One output token allowed: the upstream stops after its first piece, whose text counts as
      // more tokens than the one the request was held for.
      const prompt = `x [nousage] ${type}`;
      const { text, cost, held } = await streamed(prompt, 1);
      const estimate = quotaOf({
        input: estimateTextTokens(prompt.length),
        output: estimateTextTokens(text.length),
        cached: 0,
      });
      expect(estimate).toBeGreaterThan(held);
      expect(cost).toBe(held);
    });
  });
}
