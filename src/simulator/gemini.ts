import type { FastifyInstance } from "fastify";
import { answerGeminiEmbedding } from "./embeddings.js";
import { answerGeminiImage } from "./gemini-image.js";
import { answerGeminiCount, answerGeminiText } from "./gemini-text.js";
import type { GeminiSimRequest, SimulatorState } from "./state.js";

const BAD_KEY = {
  error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" },
};

/**
 * `POST /v1beta/models/{model}:generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents`.
 * A request asking for the IMAGE modality is answered by the image part of the simulator, the
 * embedding methods by embeddings.ts, a count by the text part's count of the prompt, every other by
 * the text part. `GET /v1beta/models` (what a channel's probe asks) checks the key and lists no model.
 */
export async function geminiSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  app.get("/v1beta/models", async (request, reply) => {
    const key = request.headers["x-goog-api-key"] ?? (request.query as Record<string, string>).key;
    const keys = state.options.keys;
    if (typeof key !== "string" || key === "" || (keys && !keys.includes(key))) return reply.status(400).send(BAD_KEY);
    return { models: [] };
  });
  app.post("/v1beta/models/:target", async (request, reply) => {
    const target = (request.params as { target: string }).target;
    const sep = target.lastIndexOf(":");
    const model = sep > 0 ? target.slice(0, sep) : target;
    const method = sep > 0 ? target.slice(sep + 1) : "";
    const embedding = method === "embedContent" || method === "batchEmbedContents";
    const known = method === "generateContent" || method === "streamGenerateContent" || method === "countTokens";
    if (!known && !embedding) {
      return reply.status(404).send({ error: { code: 404, message: `unknown method ${method}`, status: "NOT_FOUND" } });
    }
    const key = request.headers["x-goog-api-key"] ?? (request.query as Record<string, string>).key;
    const keys = state.options.keys;
    if (typeof key !== "string" || key === "" || (keys && !keys.includes(key))) {
      return reply.status(400).send(BAD_KEY);
    }
    if (method === "embedContent" || method === "batchEmbedContents") {
      return answerGeminiEmbedding(state, model, method, request, reply);
    }
    const body = request.body as any;
    if (method === "countTokens") return answerGeminiCount({ model, body, request, reply, state });
    const modalities: unknown = body?.generationConfig?.responseModalities;
    const wantsImage = Array.isArray(modalities) && modalities.some((m) => String(m).toUpperCase() === "IMAGE");
    const sim: GeminiSimRequest = {
      model,
      method,
      sse: (request.query as Record<string, string>).alt === "sse",
      body,
      request,
      reply,
      state,
    };
    return wantsImage ? answerGeminiImage(sim) : answerGeminiText(sim);
  });
}
