import type { FastifyInstance, FastifyRequest } from "fastify";
import { type ChatScript, chatScript, SIM_IMAGE_TOKENS } from "./chat-script.js";
import { tokensOf } from "./gemini-text.js";
import { PlannedAnswer, planFor, writeAndWait, writePlannedSteps } from "./planned-stream.js";
import type { SimulatorState } from "./state.js";

const ERRORS: Record<number, { type: string; message: string }> = {
  429: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" },
  500: { type: "api_error", message: "Internal server error" },
  503: { type: "overloaded_error", message: "Overloaded" },
};

function blocksText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  let text = "";
  let images = 0;
  for (const block of Array.isArray(content) ? content : []) {
    if (block?.type === "text" && typeof block.text === "string") text += block.text;
    else if (block?.type === "image") images += 1;
    else if (block?.type === "tool_result") {
      const inner = blocksText(block.content);
      text += inner.text;
      images += inner.images;
    }
  }
  return { text, images };
}

/** The prompt's text and images: the system text and every message's. */
function promptOf(body: any): { prompt: string; images: number } {
  const system = blocksText(body?.system);
  let prompt = system.text;
  let images = 0;
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    const c = blocksText(m?.content);
    prompt += c.text;
    images += c.images;
  }
  return { prompt, images };
}

function scriptFor(state: SimulatorState, body: any): ChatScript {
  const { prompt, images } = promptOf(body);
  const choice = body?.tool_choice;
  return chatScript(
    {
      prompt,
      images,
      toolNames: (Array.isArray(body?.tools) ? body.tools : []).map((t: any) => String(t?.name)),
      forcedTool: choice?.type === "any" ? "any" : choice?.type === "tool" ? String(choice.name) : null,
      toolsDisabled: choice?.type === "none",
      maxTokens: Number(body?.max_tokens) || null,
      n: 1,
    },
    state.options.anthropic ?? {},
    state.random(),
  );
}

/** Prompts written to the simulated prompt cache, per simulator. */
const cachedPrompts = new WeakMap<SimulatorState, Set<string>>();

/**
 * The prompt cache as Anthropic reports it: a request that marks a cache breakpoint
 * (`cache_control` anywhere, or `[cache-5m]` / `[cache-1h]` in its prompt; a `ttl` of `1h` or
 * `[cache-1h]` writes for an hour) writes all its prompt but the last two tokens to the cache the
 * first time that prompt is seen, and reads them from it every later time.
 */
function promptCache(state: SimulatorState, body: any, prompt: string, promptTokens: number) {
  const raw = JSON.stringify(body ?? {});
  const marked = raw.includes('"cache_control"');
  const oneHour = prompt.includes("[cache-1h]") || (marked && /"ttl"\s*:\s*"1h"/.test(raw));
  if (!marked && !oneHour && !prompt.includes("[cache-5m]")) return null;
  const seen = cachedPrompts.get(state) ?? new Set<string>();
  cachedPrompts.set(state, seen);
  const key = `${String(body?.model)}:${prompt}`;
  const cached = Math.max(0, promptTokens - 2);
  const read = seen.has(key);
  seen.add(key);
  return {
    input_tokens: promptTokens - cached,
    cache_read_input_tokens: read ? cached : 0,
    cache_creation_input_tokens: read ? 0 : cached,
    cache_creation: {
      ephemeral_5m_input_tokens: read || oneHour ? 0 : cached,
      ephemeral_1h_input_tokens: !read && oneHour ? cached : 0,
    },
  };
}

const stopReason = (finish: string) =>
  finish === "tool" ? "tool_use" : finish === "length" ? "max_tokens" : "end_turn";

/** The refusal of a request without a valid key or version header, else null. */
function refusal(state: SimulatorState, request: FastifyRequest): { status: number; body: unknown } | null {
  const key = request.headers["x-api-key"];
  const keys = state.options.keys;
  if (typeof key !== "string" || key === "" || (keys && !keys.includes(key))) {
    return {
      status: 401,
      body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
    };
  }
  if (request.headers["anthropic-version"] !== "2023-06-01") {
    return {
      status: 400,
      body: {
        type: "error",
        error: { type: "invalid_request_error", message: "anthropic-version: header is required" },
      },
    };
  }
  return null;
}

/**
 * `POST /v1/messages` (the Anthropic Messages protocol, plain and streamed as named SSE events)
 * and `POST /v1/messages/count_tokens` (the input tokens a message would report).
 */
export async function anthropicSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  app.post("/v1/messages/count_tokens", async (request, reply) => {
    const refused = refusal(state, request);
    if (refused) return reply.status(refused.status).send(refused.body);
    const body = request.body as any;
    PlannedAnswer.received(state, "anthropic", request, reply, body);
    if (body?.max_tokens !== undefined || body?.stream !== undefined) {
      const field = body?.max_tokens !== undefined ? "max_tokens" : "stream";
      return reply.status(400).send({
        type: "error",
        error: { type: "invalid_request_error", message: `${field}: Extra inputs are not permitted` },
      });
    }
    const { prompt, images } = promptOf(body);
    const plan = planFor(state.options.anthropic ?? {}, prompt);
    if (plan.status !== null) {
      const status = plan.status === 503 ? 529 : plan.status;
      return reply.status(status).send({ type: "error", error: ERRORS[plan.status] ?? ERRORS[500] });
    }
    // The same count a generate call of this body reports as its input (cached and fresh together).
    return reply.send({ input_tokens: tokensOf(prompt) + images * SIM_IMAGE_TOKENS });
  });

  app.post("/v1/messages", async (request, reply) => {
    const refused = refusal(state, request);
    if (refused) return reply.status(refused.status).send(refused.body);
    const body = request.body as any;
    if (!Number.isInteger(body?.max_tokens)) {
      return reply
        .status(400)
        .send({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } });
    }
    const answer = PlannedAnswer.received(state, "anthropic", request, reply, body);
    const options = state.options.anthropic ?? {};
    const script = scriptFor(state, body);
    const { plan } = script;
    if (plan.status !== null) {
      const status = plan.status === 503 ? 529 : plan.status;
      return reply.status(status).send({ type: "error", error: ERRORS[plan.status] ?? ERRORS[500] });
    }
    const choice = script.choices[0] as ChatScript["choices"][number];
    const u = script.usage;
    const cache = plan.noUsage ? null : promptCache(state, body, promptOf(body).prompt, u.prompt);
    const usage = plan.noUsage
      ? { input_tokens: 0, output_tokens: 0 }
      : {
          input_tokens: u.prompt - u.cached,
          output_tokens: u.completion,
          cache_read_input_tokens: u.cached,
          cache_creation_input_tokens: 0,
          ...cache,
        };
    const id = `msg_${script.id}`;
    const model = String(body?.model ?? "");
    const content = choice.tool
      ? [
          {
            type: "tool_use",
            id: `toolu_${script.id.slice(0, 16)}`,
            name: choice.tool.name,
            input: JSON.parse(choice.tool.argPieces.join("")),
          },
        ]
      : [{ type: "text", text: choice.pieces.join("") }];

    if (body?.stream !== true) {
      if (answer.cutWhole(plan)) return reply;
      return reply.send({
        id,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stopReason(choice.finish),
        stop_sequence: null,
        usage,
      });
    }

    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
    const send = (event: string, data: unknown) =>
      writeAndWait(raw, `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    await send("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: plan.noUsage ? 0 : 1 },
      },
    });
    const first = content[0] as Record<string, unknown>;
    await send("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: choice.tool ? { ...first, input: {} } : { type: "text", text: "" },
    });
    await send("ping", { type: "ping" });
    const pieces = choice.tool ? choice.tool.argPieces : choice.pieces;
    const complete = await writePlannedSteps(raw, plan, answer, pieces.length, {
      beforeChunk: options.beforeChunk,
      truncate: () => raw.end(),
      async error() {
        await send("error", { type: "error", error: ERRORS[503] });
        raw.end();
      },
      write: (i) =>
        send("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: choice.tool
            ? { type: "input_json_delta", partial_json: pieces[i] }
            : { type: "text_delta", text: pieces[i] },
        }),
    });
    if (!complete) return reply;
    await send("content_block_stop", { type: "content_block_stop", index: 0 });
    await send("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason(choice.finish), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    await send("message_stop", { type: "message_stop" });
    raw.end();
    return reply;
  });
}
