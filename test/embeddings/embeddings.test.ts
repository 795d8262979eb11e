import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quotaForTokens } from "../../src/core/pricing.js";
import { tokenUsage } from "../../src/core/token-usage.js";
import { simulatedEmbedding } from "../../src/simulator/embeddings.js";
import { type Simulator, startSimulator } from "../../src/simulator/server.js";
import { type StoreKind, startTestGateway, type TestGateway } from "../support/gateway.js";
import { HAS_PG } from "../support/postgres.js";

const SIM_KEY = "sim-embed-key-0123456789";
const OPENAI_MODEL = "text-embedding-3-small";
const GEMINI_MODEL = "gemini-embedding-001";
const PRICE = { inputPerMillion: 20, outputPerMillion: 0, cachedRatio: 1 };
const RATIOS = { groupRatio: 1, channelRatio: 1, quotaPerUnit: 500_000 };
const STORES: StoreKind[] = ["sqlite", "postgres"];

const costOf = (tokens: number) =>
  quotaForTokens(tokenUsage({ input: tokens }), { input: PRICE.inputPerMillion, output: 0 }, RATIOS);

/** The hold of texts: a token per byte, and two per input. */
const holdOf = (texts: string[]) => costOf(texts.reduce((s, t) => s + Buffer.byteLength(t) + 2, 0));

function closeTo(actual: ArrayLike<number>, expected: number[]) {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i]).toBeCloseTo(expected[i] as number, 6);
}

for (const kind of STORES) {
  describe.skipIf(kind === "postgres" && !HAS_PG)(`embeddings [${kind}]`, () => {
    let gw: TestGateway;
    let sim: Simulator;
    let user: { userId: number; tokenId: number; key: string };
    let openai: OpenAI;
    let genai: GoogleGenAI;

    beforeAll(async () => {
      sim = await startSimulator({ keys: [SIM_KEY] });
      gw = await startTestGateway(kind);
      for (const name of [OPENAI_MODEL, GEMINI_MODEL, "chat-only"]) {
        await gw.gateway.ctx.prices.setPrice({ kind: "content", name, ...PRICE });
      }
      await gw.createChannel({ type: "openai-chat", baseUrl: sim.url, key: SIM_KEY, models: [OPENAI_MODEL] });
      await gw.createChannel({ type: "gemini", baseUrl: sim.url, key: SIM_KEY, models: [GEMINI_MODEL] });
      user = await gw.createUser({ quota: 10_000_000 });
      openai = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      genai = new GoogleGenAI({ apiKey: user.key, httpOptions: { baseUrl: gw.url } });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    async function ledgerOf(reference: string) {
      const rows = await gw.gateway.ctx.ledger.entries(user.userId, { limit: 1000 });
      return rows
        .filter((r) => r.reference === reference)
        .map((r) => ({ kind: r.kind, amount: Number(r.amount) }))
        .reverse();
    }

    async function logRow(requestId: string) {
      await gw.gateway.ctx.requestLogs.flush();
      return gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .selectAll()
        .where("request_id", "=", requestId)
        .executeTakeFirst();
    }

    async function lastEmbeddingsRequestId(): Promise<string> {
      await gw.gateway.ctx.requestLogs.flush();
      const row = await gw.gateway.ctx.store.db
        .selectFrom("request_logs")
        .select("request_id")
        .where("surface", "=", "embeddings")
        .orderBy("id", "desc")
        .executeTakeFirstOrThrow();
      return row.request_id;
    }

    it("answers the OpenAI client's default (base64) with the upstream's vectors, and bills the reported tokens", async () => {
      const texts = ["the first text", "a second, longer text to embed"];
      const answer = await openai.embeddings.create({ model: OPENAI_MODEL, input: texts, dimensions: 16 });
      expect(answer.object).toBe("list");
      expect(answer.model).toBe(OPENAI_MODEL);
      expect(answer.data.map((d) => d.index)).toEqual([0, 1]);
      closeTo(answer.data[0]?.embedding ?? [], simulatedEmbedding(texts[0] as string, 16));
      closeTo(answer.data[1]?.embedding ?? [], simulatedEmbedding(texts[1] as string, 16));
      const tokens = texts.reduce((s, t) => s + Math.ceil(t.length / 4), 0);
      expect(answer.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
      // The client asked the gateway for base64; the upstream was asked for floats.
      const sent = sim.received.filter((r) => r.protocol === "openai-embeddings").at(-1)?.body as Record<
        string,
        unknown
      >;
      expect(sent).toMatchObject({ model: OPENAI_MODEL, input: texts, dimensions: 16, encoding_format: "float" });
      const id = await lastEmbeddingsRequestId();
      expect(await ledgerOf(`embeddings:${id}`)).toEqual([
        { kind: "charge", amount: -holdOf(texts) },
        { kind: "settle", amount: holdOf(texts) - costOf(tokens) },
      ]);
      const row = await logRow(id);
      expect(row).toMatchObject({ surface: "embeddings", model: OPENAI_MODEL, status: 200 });
      expect(Number(row?.prompt_tokens)).toBe(tokens);
      expect(Number(row?.quota)).toBe(costOf(tokens));
    });

    it("answers floats when asked, and base64 of float32s on the wire when asked", async () => {
      const floats = await openai.embeddings.create({
        model: OPENAI_MODEL,
        input: "one text",
        encoding_format: "float",
      });
      closeTo(floats.data[0]?.embedding ?? [], simulatedEmbedding("one text", 1536));
      const res = await fetch(`${gw.url}/v1/embeddings`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: OPENAI_MODEL, input: "one text", encoding_format: "base64", dimensions: 8 }),
      });
      const body = (await res.json()) as { data: Array<{ embedding: string }> };
      const bytes = Buffer.from(body.data[0]?.embedding ?? "", "base64");
      closeTo(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4), simulatedEmbedding("one text", 8));
    });

    it("takes token lists on an OpenAI-compatible upstream and refuses them on Gemini", async () => {
      const answer = await openai.embeddings.create({
        model: OPENAI_MODEL,
        input: [
          [1, 2, 3],
          [4, 5],
        ],
        dimensions: 4,
      });
      closeTo(answer.data[1]?.embedding ?? [], simulatedEmbedding([4, 5], 4));
      expect(answer.usage.prompt_tokens).toBe(5);
      const before = await gw.balance(user.userId);
      const refused = await openai.embeddings.create({ model: GEMINI_MODEL, input: [1, 2, 3] }).catch((e) => e);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused.param).toBe("input");
      expect(await gw.balance(user.userId)).toBe(before);
    });

    it("serves a Gemini model on the OpenAI surface, settled to the gateway's count (Gemini reports none)", async () => {
      const texts = ["alpha beta", "gamma delta epsilon"];
      const answer = await openai.embeddings.create({ model: GEMINI_MODEL, input: texts, dimensions: 32 });
      closeTo(answer.data[1]?.embedding ?? [], simulatedEmbedding(texts[1] as string, 32));
      const counted = texts.reduce((s, t) => s + Math.ceil(t.length / 4), 0);
      expect(answer.usage.prompt_tokens).toBe(counted);
      const sent = sim.received.filter((r) => r.protocol === "gemini-embeddings").at(-1);
      expect(sent?.path).toContain(`/v1beta/models/${GEMINI_MODEL}:batchEmbedContents`);
      expect(sent?.body).toMatchObject({
        requests: [{ model: `models/${GEMINI_MODEL}`, outputDimensionality: 32 }, {}],
      });
      const id = await lastEmbeddingsRequestId();
      const rows = await ledgerOf(`embeddings:${id}`);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "settle"]);
      expect(-(rows[0]?.amount ?? 0) - (rows[1]?.amount ?? 0)).toBe(costOf(counted));
    });

    it("answers Google's client on :embedContent and :batchEmbedContents", async () => {
      const one = await genai.models.embedContent({
        model: GEMINI_MODEL,
        contents: "what is a gateway",
        config: { outputDimensionality: 12, taskType: "RETRIEVAL_QUERY" },
      });
      expect(one.embeddings).toHaveLength(1);
      closeTo(one.embeddings?.[0]?.values ?? [], simulatedEmbedding("what is a gateway", 12));
      const many = await genai.models.embedContent({
        model: GEMINI_MODEL,
        contents: ["first", "second", "third"],
        config: { outputDimensionality: 6 },
      });
      expect(many.embeddings?.map((e) => e.values?.length)).toEqual([6, 6, 6]);
      closeTo(many.embeddings?.[2]?.values ?? [], simulatedEmbedding("third", 6));
      const sent = sim.received.filter((r) => r.protocol === "gemini-embeddings").at(-1);
      expect(sent?.body).toMatchObject({ requests: [{}, {}, {}] });
      // A raw :embedContent, as other clients call it.
      const res = await fetch(`${gw.url}/v1beta/models/${GEMINI_MODEL}:embedContent`, {
        method: "POST",
        headers: { "x-goog-api-key": user.key, "content-type": "application/json" },
        body: JSON.stringify({ content: { parts: [{ text: "raw" }] }, outputDimensionality: 3 }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { embedding: { values: number[] } };
      closeTo(body.embedding.values, simulatedEmbedding("raw", 3));
      const id = await lastEmbeddingsRequestId();
      const rows = await ledgerOf(`embeddings:${id}`);
      expect(-(rows[0]?.amount ?? 0) - (rows[1]?.amount ?? 0)).toBe(costOf(1));
      // The content methods still answer on the same path.
      const other = await fetch(`${gw.url}/v1beta/models/${GEMINI_MODEL}:unknownMethod`, {
        method: "POST",
        headers: { "x-goog-api-key": user.key, "content-type": "application/json" },
        body: "{}",
      });
      expect(other.status).toBe(404);
    });

    it("refunds the hold when the upstream fails, and logs the failure", async () => {
      const before = await gw.balance(user.userId);
      const err = await openai.embeddings.create({ model: OPENAI_MODEL, input: "boom [error500]" }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBeGreaterThanOrEqual(500);
      const id = await lastEmbeddingsRequestId();
      const rows = await ledgerOf(`embeddings:${id}`);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "refund"]);
      expect(rows[0]?.amount).toBe(-holdOf(["boom [error500]"]));
      expect(rows[1]?.amount).toBe(holdOf(["boom [error500]"]));
      expect(await gw.balance(user.userId)).toBe(before);
      const row = await logRow(id);
      expect(Number(row?.status)).toBeGreaterThanOrEqual(500);
      expect(Number(row?.quota)).toBe(0);

      const gemini = await genai.models
        .embedContent({ model: GEMINI_MODEL, contents: "[error500]" })
        .catch((e: unknown) => e);
      expect(gemini).toBeInstanceOf(ApiError);
      expect(await gw.balance(user.userId)).toBe(before);
      // An answer with fewer vectors than inputs is a failure too, refunded.
      const fewer = await openai.embeddings.create({ model: OPENAI_MODEL, input: ["a [fewer]", "b"] }).catch((e) => e);
      expect(fewer).toBeInstanceOf(OpenAI.APIError);
      expect(await gw.balance(user.userId)).toBe(before);
    });

    it("refuses bad input with a 400 naming the field, without a charge or an upstream call", async () => {
      const calls = sim.received.length;
      const before = await gw.balance(user.userId);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ model: OPENAI_MODEL, input: [] }, "input"],
        [{ model: OPENAI_MODEL, input: "" }, "input"],
        [{ model: OPENAI_MODEL, input: ["ok", ""] }, "input[1]"],
        [{ model: OPENAI_MODEL, input: [[1], []] }, "input[1]"],
        [{ model: OPENAI_MODEL, input: Array.from({ length: 2049 }, () => "x") }, "input"],
        [{ model: OPENAI_MODEL, input: "x", dimensions: 0 }, "dimensions"],
        [{ model: OPENAI_MODEL, input: "x", dimensions: 1.5 }, "dimensions"],
        [{ model: OPENAI_MODEL, input: "x", dimensions: 5000 }, "dimensions"],
        [{ model: OPENAI_MODEL, input: "x", encoding_format: "int8" }, "encoding_format"],
      ];
      for (const [body, param] of cases) {
        const res = await fetch(`${gw.url}/v1/embeddings`, {
          method: "POST",
          headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { error: { param: string; type: string; message: string } };
        expect({ status: res.status, param: answer.error.param }).toEqual({ status: 400, param });
        expect(answer.error.message).toContain(param.replace(/\[\d+\]$/, ""));
      }
      const gemini: Array<[string, Record<string, unknown>, string]> = [
        ["embedContent", { content: { parts: [{ text: "" }] } }, "content"],
        ["embedContent", { content: { parts: [{ text: "x" }] }, outputDimensionality: 0 }, "outputDimensionality"],
        ["batchEmbedContents", { requests: [] }, "requests"],
        [
          "batchEmbedContents",
          { requests: [{ model: "models/other", content: { parts: [{ text: "x" }] } }] },
          "requests[0].model",
        ],
      ];
      for (const [method, body, field] of gemini) {
        const res = await fetch(`${gw.url}/v1beta/models/${GEMINI_MODEL}:${method}`, {
          method: "POST",
          headers: { "x-goog-api-key": user.key, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { error: { code: number; status: string; message: string } };
        expect(res.status).toBe(400);
        expect(answer.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
        expect(answer.error.message).toContain(field);
      }
      expect(sim.received.length).toBe(calls);
      expect(await gw.balance(user.userId)).toBe(before);
    });

    it("keeps a token to its models, and refuses a hold the balance cannot cover", async () => {
      const limited = await gw.createUser({ quota: 10_000_000, token: { models: [GEMINI_MODEL] } });
      const client = new OpenAI({ apiKey: limited.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const refused = await client.embeddings.create({ model: OPENAI_MODEL, input: "x" }).catch((e) => e);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      const ok = await client.embeddings.create({ model: GEMINI_MODEL, input: "x" });
      expect(ok.data).toHaveLength(1);
      const google = new GoogleGenAI({ apiKey: limited.key, httpOptions: { baseUrl: gw.url } });
      await google.models.embedContent({ model: GEMINI_MODEL, contents: "fine" });

      const poor = await gw.createUser({ quota: 1 });
      const calls = sim.received.length;
      const broke = new OpenAI({ apiKey: poor.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const err = await broke.embeddings.create({ model: OPENAI_MODEL, input: "x".repeat(5000) }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(403);
      expect(err.message).toContain("5002 input tokens at most");
      expect(sim.received.length).toBe(calls);
      expect(await gw.balance(poor.userId)).toBe(1);
    });

    it("fails over to the next channel when one is refused its key, and bills once", async () => {
      const model = "embed-failover";
      await gw.gateway.ctx.prices.setPrice({ kind: "content", name: model, ...PRICE });
      await gw.createChannel({ type: "openai-chat", baseUrl: sim.url, key: "bad-key", models: [model], priority: 10 });
      await gw.createChannel({ type: "gemini", baseUrl: sim.url, key: SIM_KEY, models: [model], priority: 0 });
      await gw.gateway.ctx.announce("channels");
      const answer = await openai.embeddings.create({ model, input: "fail over", dimensions: 5 });
      const refused = sim.received.filter((r) => r.protocol === "openai-embeddings").at(-1);
      expect(refused?.headers.authorization).toBe("Bearer bad-key");
      closeTo(answer.data[0]?.embedding ?? [], simulatedEmbedding("fail over", 5));
      const id = await lastEmbeddingsRequestId();
      const rows = await ledgerOf(`embeddings:${id}`);
      expect(rows.map((r) => r.kind)).toEqual(["charge", "settle"]);
      expect(-(rows[0]?.amount ?? 0) - (rows[1]?.amount ?? 0)).toBe(costOf(Math.ceil("fail over".length / 4)));
    });

    it("lists the embedding models in /v1/models and says an unknown model is unknown", async () => {
      const models = await openai.models.list();
      const ids = models.data.map((m) => m.id);
      expect(ids).toEqual(expect.arrayContaining([OPENAI_MODEL, GEMINI_MODEL]));
      const err = await openai.embeddings.create({ model: "no-such-model", input: "x" }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    });
  });
}
