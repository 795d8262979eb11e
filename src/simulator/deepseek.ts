import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ChatScript, chatScript } from "./chat-script.js";
import { simulatedChunkText, tokensOf } from "./gemini-text.js";
import { sleep, writeAndWait } from "./planned-stream.js";
import type { SimulatorState } from "./state.js";

/** DeepSeek's error body: OpenAI's shape. */
const error = (message: string, type: string) => ({ error: { message, type, param: null, code: type } });

function promptOf(body: any): string {
  let prompt = "";
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    if (typeof m?.content === "string") prompt += m.content;
  }
  return prompt;
}

/** The reasoning of a reasoner model, before its answer: deterministic pieces from the prompt. */
function reasoningPieces(model: string, prompt: string, count: number): string[] {
  if (!model.includes("reasoner")) return [];
  return Array.from({ length: count }, (_, i) => simulatedChunkText(`reasoning:${prompt}`, i, i === count - 1));
}

/** DeepSeek's usage: cache hits and misses instead of OpenAI's details, reasoning inside completion. */
function usageOf(script: ChatScript, reasoning: string[]) {
  const reasoningTokens = reasoning.reduce((sum, piece) => sum + tokensOf(piece), 0);
  const u = script.usage;
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion + reasoningTokens,
    total_tokens: u.prompt + u.completion + reasoningTokens,
    prompt_cache_hit_tokens: u.cached,
    prompt_cache_miss_tokens: u.prompt - u.cached,
    completion_tokens_details: { reasoning_tokens: reasoningTokens },
  };
}

/**
 * DeepSeek's Chat Completions (`POST /chat/completions`, also at `/v1/...`), under `/deepseek`:
 * the openai-chat simulator's text model, one choice per request; a model whose name holds
 * `reasoner` reasons first, shown in `reasoning_content` (a stream's reasoning deltas come before
 * its content deltas, then `reasoning_content: null`). As DeepSeek does, a request whose messages
 * carry `reasoning_content` is refused with a 400.
 */
export async function deepSeekSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = /^Bearer\s+(\S+)$/i.exec(String(request.headers.authorization ?? ""))?.[1];
    const keys = state.options.keys;
    if (!key || (keys && !keys.includes(key))) {
      return reply.status(401).send(error("Authentication Fails, your api key is invalid", "authentication_error"));
    }
    const body = request.body as any;
    state.record({ protocol: "deepseek", method: request.method, path: request.url, headers: request.headers, body });
    const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
    if (messages.some((m) => m?.reasoning_content !== undefined)) {
      return reply
        .status(400)
        .send(error("reasoning_content is for display only: leave it out of the messages", "invalid_request_error"));
    }
    const options = state.options.deepseek ?? {};
    const prompt = promptOf(body);
    const script = chatScript(
      {
        prompt,
        images: 0,
        toolNames: [],
        forcedTool: null,
        toolsDisabled: true,
        maxTokens: Number(body?.max_tokens) || null,
        n: 1,
      },
      options,
      state.random(),
    );
    if (script.plan.status !== null) {
      return reply.status(script.plan.status).send(error("The server is busy", "server_error"));
    }
    const model = String(body?.model ?? "");
    const choice = script.choices[0] ?? { pieces: [], tool: null, finish: "stop" };
    const reasoning = reasoningPieces(model, prompt, script.plan.chunks);
    const usage = script.plan.noUsage ? undefined : usageOf(script, reasoning);
    const head = { id: script.id, created: Math.floor(Date.now() / 1000), model, system_fingerprint: "fp_sim" };
    if (body?.stream !== true) {
      const message = { role: "assistant", content: choice.pieces.join("") };
      return reply.send({
        ...head,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: reasoning.length > 0 ? { ...message, reasoning_content: reasoning.join("") } : message,
            logprobs: null,
            finish_reason: choice.finish,
          },
        ],
        usage,
      });
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta: unknown, finish: string | null = null) =>
      writeAndWait(
        raw,
        `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`,
      );
    await send({ role: "assistant", content: null, ...(reasoning.length > 0 ? { reasoning_content: "" } : {}) });
    const deltas = [
      ...reasoning.map((piece) => ({ content: null, reasoning_content: piece })),
      ...choice.pieces.map((piece) => ({
        content: piece,
        ...(reasoning.length > 0 ? { reasoning_content: null } : {}),
      })),
    ];
    for (const delta of deltas) {
      if (script.plan.delayMs > 0) await sleep(script.plan.delayMs);
      if (raw.destroyed) return reply;
      await send(delta);
    }
    await send({ content: "" }, choice.finish);
    if (body?.stream_options?.include_usage === true && usage) {
      await writeAndWait(
        raw,
        `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [], usage })}\n\n`,
      );
    }
    raw.end("data: [DONE]\n\n");
    return reply;
  };
  app.post("/chat/completions", handler);
  app.post("/v1/chat/completions", handler);
}
