import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SimulatorState } from "./state.js";

// Embeddings as OpenAI-compatible servers and Gemini answer them: one deterministic unit vector
// per input, of the length asked (else the model's own), and OpenAI's usage. Markers in an input
// pick an outcome for the request: `[error400]`, `[error429]`, `[error500]`, `[nousage]`, `[fewer]`
// (one vector fewer than inputs).

/** FNV-1a of a text: the seed of its vector. */
function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The length of a model's vectors when none is asked for. */
export function simulatedDimensions(model: string): number {
  if (model.includes("large") || model.includes("gemini-embedding")) return 3072;
  if (model.includes("small") || model.includes("ada")) return 1536;
  return 768;
}

/**
 * The vector the simulator answers for an input: numbers from a generator seeded by the text
 * (a token list by its ids joined by commas), scaled to length 1. Rounded to float32, as vectors
 * are stored.
 */
export function simulatedEmbedding(input: string | number[], dimensions: number): number[] {
  let a = hashText(typeof input === "string" ? input : input.join(",")) || 1;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const raw = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(raw.reduce((s, x) => s + x * x, 0)) || 1;
  return Array.from(Float32Array.from(raw.map((x) => x / norm)));
}

/** The prompt tokens the simulator reports for an input: four characters a token, a token list its length. */
export function simulatedEmbeddingTokens(input: string | number[]): number {
  return typeof input === "string" ? Math.ceil(input.length / 4) : input.length;
}

function markerStatus(texts: string[]): 400 | 429 | 500 | null {
  for (const marker of [400, 429, 500] as const) if (texts.some((t) => t.includes(`[error${marker}]`))) return marker;
  return null;
}

const OPENAI_ERRORS = {
  400: { message: "Invalid input", type: "invalid_request_error", code: "invalid_input" },
  429: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" },
  500: { message: "The server had an error while processing your request.", type: "server_error", code: null },
} as const;

function base64Of(vector: number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer).toString("base64");
}

/** `POST /v1/embeddings`: the OpenAI-compatible embeddings protocol. */
export async function openAiEmbeddingsSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  app.post("/v1/embeddings", async (request, reply) => {
    state.record({
      protocol: "openai-embeddings",
      method: "POST",
      path: request.url,
      headers: request.headers,
      body: request.body,
    });
    const match = /^Bearer\s+(\S+)$/i.exec(String(request.headers.authorization ?? ""));
    const keys = state.options.keys;
    if (!match || (keys && !keys.includes(match[1] as string))) {
      return reply.status(401).send({
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    }
    const body = request.body as { model?: unknown; input?: unknown; dimensions?: unknown; encoding_format?: unknown };
    const raw = body?.input;
    const inputs: Array<string | number[]> =
      typeof raw === "string"
        ? [raw]
        : Array.isArray(raw) && raw.every((x) => typeof x === "number")
          ? [raw as number[]]
          : Array.isArray(raw)
            ? (raw as Array<string | number[]>)
            : [];
    const texts = inputs.filter((i): i is string => typeof i === "string");
    const status = inputs.length === 0 ? 400 : markerStatus(texts);
    if (status !== null) return reply.status(status).send({ error: { ...OPENAI_ERRORS[status], param: null } });
    const model = String(body.model ?? "");
    const dimensions = Number(body.dimensions) || simulatedDimensions(model);
    const kept = texts.some((t) => t.includes("[fewer]")) ? inputs.slice(1) : inputs;
    const data = kept.map((input, index) => {
      const vector = simulatedEmbedding(input, dimensions);
      return { object: "embedding", index, embedding: body.encoding_format === "base64" ? base64Of(vector) : vector };
    });
    const tokens = inputs.reduce((s: number, i) => s + simulatedEmbeddingTokens(i), 0);
    const usage = texts.some((t) => t.includes("[nousage]"))
      ? undefined
      : { prompt_tokens: tokens, total_tokens: tokens };
    return reply.send({ object: "list", data, model, usage });
  });
}

const GOOGLE_STATUS = { 400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL" } as const;

function contentText(content: unknown): string {
  const parts = (content as { parts?: unknown })?.parts;
  return (Array.isArray(parts) ? parts : []).map((p) => String((p as { text?: unknown })?.text ?? "")).join("\n");
}

/** `:embedContent` and `:batchEmbedContents` of the Gemini API (no usage: Gemini reports none). */
export function answerGeminiEmbedding(
  state: SimulatorState,
  model: string,
  method: "embedContent" | "batchEmbedContents",
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const body = request.body as any;
  state.record({ protocol: "gemini-embeddings", method: "POST", path: request.url, headers: request.headers, body });
  const requests: any[] = method === "embedContent" ? [body] : Array.isArray(body?.requests) ? body.requests : [];
  const texts = requests.map((r) => contentText(r?.content));
  const status = requests.length === 0 || requests.length > 100 ? 400 : markerStatus(texts);
  if (status !== null) {
    return reply
      .status(status)
      .send({ error: { code: status, message: "simulated failure", status: GOOGLE_STATUS[status] } });
  }
  if (method === "batchEmbedContents") {
    const wrong = requests.findIndex((r) => r?.model !== `models/${model}`);
    if (wrong !== -1) {
      return reply.status(400).send({
        error: { code: 400, message: `requests[${wrong}].model must be models/${model}`, status: "INVALID_ARGUMENT" },
      });
    }
  }
  const vectors = requests.map((r, i) => ({
    values: simulatedEmbedding(texts[i] as string, Number(r?.outputDimensionality) || simulatedDimensions(model)),
  }));
  return reply.send(method === "embedContent" ? { embedding: vectors[0] } : { embeddings: vectors });
}
