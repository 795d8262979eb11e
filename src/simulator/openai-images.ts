import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { pixelSize } from "../core/images/pixel-size.js";
import { colourOf, solidPng } from "./gemini-image.js";
import type { OpenAiImagesOutcome } from "./options.js";
import type { SimulatorState } from "./state.js";

/** What the route saw of one request; recorded as the `body` of the received request. */
export interface OpenAiImagesReceived {
  kind: "openai-images";
  model: unknown;
  prompt: string;
  n: number;
  size: unknown;
  responseFormat: unknown;
  aspectRatio: unknown;
  imageCount: number;
}

const MARKERS: Array<[string, OpenAiImagesOutcome | "fewer"]> = [
  ["[empty]", "empty"],
  ["[fewer]", "fewer"],
  ["[error400]", "error-400"],
  ["[error500]", "error-500"],
];

function openAiError(message: string, type: string) {
  return { error: { message, type, param: null, code: null } };
}

/** The `openai-images` protocol of the simulator: POST /v1/images/generations, and its image URLs. */
export async function openAiImagesSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const files = new Map<string, Buffer>();

  app.get<{ Params: { id: string } }>("/openai-images/files/:id", async (request, reply) => {
    const png = files.get(request.params.id);
    if (!png) return reply.status(404).send(openAiError("no such file", "invalid_request_error"));
    return reply.header("content-type", "image/png").send(png);
  });

  app.post("/v1/images/generations", async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, any>;
    const auth = request.headers.authorization;
    const key = typeof auth === "string" ? /^Bearer\s+(\S+)$/i.exec(auth)?.[1] : undefined;
    const n = Number.isInteger(body.n) ? (body.n as number) : 1;
    const images = body.image === undefined ? [] : Array.isArray(body.image) ? body.image : [body.image];
    const received: OpenAiImagesReceived = {
      kind: "openai-images",
      model: body.model,
      prompt: String(body.prompt ?? ""),
      n,
      size: body.size,
      responseFormat: body.response_format,
      aspectRatio: body.aspect_ratio,
      imageCount: images.length,
    };
    state.record({
      protocol: "openai-images",
      method: "POST",
      path: "/v1/images/generations",
      headers: request.headers,
      body: received,
    });
    if (!key || (state.options.keys && !state.options.keys.includes(key))) {
      return reply.status(401).send(openAiError("Incorrect API key provided.", "invalid_request_error"));
    }
    if (typeof body.prompt !== "string" || body.prompt === "") {
      return reply.status(400).send(openAiError("prompt is required", "invalid_request_error"));
    }
    const options = state.options.openaiImages ?? {};
    const usageRecord = state.usage.open({
      protocol: "openai-images",
      model: String(body.model ?? ""),
      prompt: received.prompt,
    });
    reply.raw.once("finish", () => {
      usageRecord.complete = true;
    });
    if (received.prompt.includes("[slow]")) await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 2000));
    const marked = MARKERS.find(([marker]) => received.prompt.includes(marker))?.[1];
    const outcome = marked ?? options.outcome ?? "image";
    if (outcome === "error-400")
      return reply.status(400).send(openAiError("Simulated invalid request.", "invalid_request_error"));
    if (outcome === "error-500") return reply.status(500).send(openAiError("Simulated server error.", "server_error"));

    const sized = typeof body.size === "string" ? /^(\d{2,5})x(\d{2,5})$/.exec(body.size) : null;
    const ratio = typeof body.aspect_ratio === "string" ? body.aspect_ratio : null;
    const size = sized
      ? { width: Number(sized[1]), height: Number(sized[2]) }
      : (pixelSize(null, ratio) ?? pixelSize(null, null)!);
    let count = outcome === "empty" ? 0 : outcome === "fewer" ? Math.max(0, n - 1) : n;
    count = Math.min(count, options.maxImages ?? count);
    const format = options.answerWith ?? (body.response_format === "b64_json" ? "b64_json" : "url");
    const png = solidPng(size.width, size.height, colourOf(received.prompt));
    const data = Array.from({ length: count }, () => {
      if (format === "b64_json") return { b64_json: png.toString("base64"), revised_prompt: received.prompt };
      const id = `${randomBytes(12).toString("hex")}.png`;
      if (files.size > 256) files.clear();
      files.set(id, png);
      return { url: `${state.baseUrl()}/openai-images/files/${id}`, revised_prompt: received.prompt };
    });
    usageRecord.images = data.length;
    return { created: Math.floor(Date.now() / 1000), data };
  });
}
