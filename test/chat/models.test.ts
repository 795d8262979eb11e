import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";
import { CHAT_MODEL, PRICE, SIM_KEY } from "./harness.js";

for (const kind of ["sqlite", "postgres"] as StoreKind[]) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`model listings [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let anyModel: string;
    let onlyChat: string;
    beforeAll(async () => {
      sim = await startSimulator({ keys: [SIM_KEY] });
      gw = await startTestGateway(kind);
      const prices = gw.gateway.ctx.prices;
      await prices.setPrice({ kind: "content", name: CHAT_MODEL, ...PRICE });
      await prices.setPrice({ kind: "content", name: "gold-model", ...PRICE });
      await prices.setPrice({ kind: "content", name: "disabled-model", ...PRICE });
      const base = { baseUrl: sim.url, key: SIM_KEY };
      await gw.createChannel({ ...base, type: "openai-chat", models: [CHAT_MODEL, "unpriced-model"] });
      await gw.createChannel({ ...base, type: "gemini", models: ["gemini-2.5-flash", "image-model"] });
      await gw.createChannel({ ...base, type: "anthropic", models: ["gold-model"], groups: ["gold"] });
      const disabled = await gw.createChannel({ ...base, type: "anthropic", models: ["disabled-model"] });
      await gw.admin("PATCH", `/channels/${disabled}`, { status: "disabled" });
      anyModel = (await gw.createUser({ quota: 1000 })).key;
      onlyChat = (await gw.createUser({ quota: 1000, token: { models: [CHAT_MODEL, "gemini-2.5-flash"] } })).key;
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    it("GET /v1/models lists exactly the priced models the token may use in its group", async () => {
      const client = new OpenAI({ apiKey: anyModel, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const ids: string[] = [];
      for await (const model of client.models.list()) ids.push(model.id);
      expect(ids).toEqual([CHAT_MODEL, "gemini-2.5-flash", "image-model"].sort());
      const limited = new OpenAI({ apiKey: onlyChat, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const limitedIds: string[] = [];
      for await (const model of limited.models.list()) limitedIds.push(model.id);
      expect(limitedIds).toEqual([CHAT_MODEL, "gemini-2.5-flash"].sort());
      expect((await limited.models.retrieve(CHAT_MODEL)).id).toBe(CHAT_MODEL);
      await expect(limited.models.retrieve("image-model")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(
        new OpenAI({ apiKey: "sk-nope", baseURL: `${gw.url}/v1`, maxRetries: 0 }).models.list(),
      ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    });

    it("the Gemini surface lists, gets and counts tokens of its models through @google/genai", async () => {
      const ai = new GoogleGenAI({ apiKey: anyModel, httpOptions: { baseUrl: gw.url } });
      const names: string[] = [];
      for await (const model of await ai.models.list()) names.push(model.name ?? "");
      expect(names).toEqual(["models/gemini-2.5-flash"]);
      const got = await ai.models.get({ model: "gemini-2.5-flash" });
      expect(got.name).toBe("models/gemini-2.5-flash");
      expect(got.supportedActions).toContain("countTokens");
      const err = await ai.models.get({ model: "image-model" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(404);
      const before = await gw.balance((await gw.gateway.ctx.auth.authenticate(anyModel, "127.0.0.1")).userId);
      const counted = await ai.models.countTokens({ model: "gemini-2.5-flash", contents: "How many tokens is this?" });
      expect(counted.totalTokens).toBe(Math.ceil("How many tokens is this?".length / 4));
      const after = await gw.balance((await gw.gateway.ctx.auth.authenticate(anyModel, "127.0.0.1")).userId);
      expect(after).toBe(before);
    });
  });
}
