import type { FastifyInstance } from "fastify";
import { type ChatScript, chatScript, type ScriptChoice } from "./chat-script.js";
import { PlannedAnswer, writeAndWait, writePlannedSteps } from "./planned-stream.js";
import type { SimulatorState } from "./state.js";

const ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  429: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" },
  500: { message: "The server had an error while processing your request.", type: "server_error", code: null },
  503: { message: "The engine is currently overloaded, please try again later", type: "server_error", code: null },
};

function textOfContent(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  let text = "";
  let images = 0;
  for (const part of Array.isArray(content) ? content : []) {
    if (typeof part?.text === "string") text += part.text;
    else if (part?.type === "image_url") images += 1;
  }
  return { text, images };
}

function scriptFor(state: SimulatorState, body: any): ChatScript {
  let prompt = "";
  let images = 0;
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    const c = textOfContent(m?.content);
    prompt += c.text;
    images += c.images;
  }
  const tools: string[] = (Array.isArray(body?.tools) ? body.tools : []).map((t: any) => String(t?.function?.name));
  const choice = body?.tool_choice;
  const forced = choice === "required" ? "any" : typeof choice === "object" ? String(choice?.function?.name) : null;
  return chatScript(
    {
      prompt,
      images,
      toolNames: tools,
      forcedTool: forced,
      toolsDisabled: choice === "none",
      maxTokens: Number(body?.max_completion_tokens ?? body?.max_tokens) || null,
      n: Number(body?.n) || 1,
    },
    state.options.openaiChat ?? {},
    state.random(),
  );
}

function usageOf(script: ChatScript, noUsage: boolean) {
  if (noUsage) return undefined;
  const u = script.usage;
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    prompt_tokens_details: { cached_tokens: u.cached },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

const finishWord = (c: ScriptChoice) => (c.finish === "tool" ? "tool_calls" : c.finish);

/** The pieces of one choice, one per stream step. */
function steps(choice: ScriptChoice): number {
  return choice.tool ? choice.tool.argPieces.length : choice.pieces.length;
}

/** The delta of one choice at stream step `i` (none once the choice has no more pieces). */
function chunkChoice(c: ScriptChoice, index: number, i: number): unknown[] {
  if (i >= steps(c)) return [];
  const first = i === 0 ? { role: "assistant" } : {};
  if (c.tool) {
    const call =
      i === 0
        ? {
            index: 0,
            id: c.tool.id,
            type: "function",
            function: { name: c.tool.name, arguments: c.tool.argPieces[0] },
          }
        : { index: 0, function: { arguments: c.tool.argPieces[i] } };
    return [
      {
        index,
        delta: { ...first, ...(i === 0 ? { content: null } : {}), tool_calls: [call] },
        finish_reason: null,
      },
    ];
  }
  return [{ index, delta: { ...first, content: c.pieces[i] }, finish_reason: null }];
}

/** `POST /v1/chat/completions`: the OpenAI-compatible chat protocol, plain and streamed. */
export async function openAiChatSimulator(app: FastifyInstance, opts: { state: SimulatorState }) {
  const { state } = opts;
  app.post("/v1/chat/completions", async (request, reply) => {
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
    const body = request.body as any;
    const answer = PlannedAnswer.received(state, "openai-chat", request, reply, body);
    const options = state.options.openaiChat ?? {};
    const script = scriptFor(state, body);
    const { plan } = script;
    if (plan.status !== null) {
      const e = ERRORS[plan.status] ?? { message: "error", type: "server_error", code: null };
      return reply.status(plan.status).send({ error: { ...e, param: null } });
    }
    const model = String(body?.model ?? "");
    const created = Math.floor(Date.now() / 1000);
    const id = `chatcmpl-${script.id}`;

    if (body?.stream !== true) {
      if (answer.cutWhole(plan)) return reply;
      return reply.send({
        id,
        object: "chat.completion",
        created,
        model,
        choices: script.choices.map((c, index) => ({
          index,
          message: {
            role: "assistant",
            content: c.tool ? null : c.pieces.join(""),
            ...(c.tool
              ? {
                  tool_calls: [
                    {
                      id: c.tool.id,
                      type: "function",
                      function: { name: c.tool.name, arguments: c.tool.argPieces.join("") },
                    },
                  ],
                }
              : {}),
          },
          finish_reason: finishWord(c),
        })),
        usage: usageOf(script, plan.noUsage),
        system_fingerprint: "fp_sim",
      });
    }

    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { "content-type": "text/event-stream" });
    const send = (chunk: unknown) => writeAndWait(raw, `data: ${JSON.stringify(chunk)}\n\n`);
    const head = { id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_sim" };
    const total = Math.max(...script.choices.map(steps));
    const complete = await writePlannedSteps(raw, plan, answer, total, {
      beforeChunk: options.beforeChunk,
      truncate: () => raw.end("data: [DONE]\n\n"),
      async error() {
        await send({ error: { ...ERRORS[500], param: null } });
        raw.end();
      },
      write: (i) => send({ ...head, choices: script.choices.flatMap((c, index) => chunkChoice(c, index, i)) }),
    });
    if (!complete) return reply;
    await send({
      ...head,
      choices: script.choices.map((c, index) => ({ index, delta: {}, finish_reason: finishWord(c) })),
    });
    const usage = usageOf(script, plan.noUsage);
    if (body?.stream_options?.include_usage === true && usage) await send({ ...head, choices: [], usage });
    raw.end("data: [DONE]\n\n");
    return reply;
  });
}
