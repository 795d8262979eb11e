import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { GeminiTextSimOptions } from "./options.js";
import type { GeminiSimRequest } from "./state.js";
import type { ReportedUsage } from "./usage-log.js";

const VOCABULARY = [
  "river",
  "lantern",
  "quiet",
  "harbor",
  "copper",
  "meadow",
  "signal",
  "amber",
  "orbit",
  "willow",
  "granite",
  "echo",
  "velvet",
  "summit",
  "cedar",
  "pulse",
];
const WORDS_PER_CHUNK = 6;
const MEDIA_PART_TOKENS = 258;

const ERRORS: Record<number, { message: string; status: string }> = {
  429: { message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" },
  500: { message: "An internal error has occurred.", status: "INTERNAL" },
  503: { message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" },
};

export interface Plan {
  chunks: number;
  delayMs: number;
  status: number | null;
  cutAfter: number | null;
  truncateAfter: number | null;
  errorAfter: number | null;
  blocked: boolean;
  thoughts: number;
  cached: number;
  noUsage: boolean;
}

function promptOf(body: any): { text: string; media: number } {
  let text = "";
  let media = 0;
  const contents = Array.isArray(body?.contents) ? [...body.contents] : [];
  if (body?.systemInstruction) contents.push(body.systemInstruction);
  for (const content of contents) {
    for (const part of Array.isArray(content?.parts) ? content.parts : []) {
      if (typeof part?.text === "string") text += part.text;
      else if (part?.inlineData || part?.fileData) media += 1;
    }
  }
  return { text, media };
}

export function planFor(options: GeminiTextSimOptions, prompt: string): Plan {
  const chunksMarker = /\[chunks=(\d+)\]/.exec(prompt);
  const chunks = Math.max(1, Number(chunksMarker?.[1] ?? options.chunks ?? 3));
  const midway = Math.max(1, Math.floor(chunks / 2));
  const statusMarker = /\[(429|500|503)\]/.exec(prompt);
  return {
    chunks,
    delayMs: options.chunkDelayMs ?? (prompt.includes("[slow]") ? 200 : 0),
    status: statusMarker ? Number(statusMarker[1]) : (options.status ?? null),
    cutAfter: prompt.includes("[cut]") ? midway : (options.failAfterChunks ?? null),
    truncateAfter: prompt.includes("[truncate]") ? midway : (options.truncateAfterChunks ?? null),
    errorAfter: prompt.includes("[error-event]") ? midway : (options.errorAfterChunks ?? null),
    blocked: prompt.includes("[blocked]") || options.blocked === true,
    thoughts: prompt.includes("[thoughts]") ? 16 : (options.thoughtsTokens ?? 0),
    cached: prompt.includes("[cached]") ? 8 : (options.cachedTokens ?? 0),
    noUsage: prompt.includes("[nousage]") || options.noUsage === true,
  };
}

/** The deterministic text of chunk `index` for a prompt. */
export function simulatedChunkText(prompt: string, index: number, last: boolean): string {
  const seed = createHash("sha256").update(prompt).digest().readUInt32BE(0);
  const words: string[] = [];
  for (let j = 0; j < WORDS_PER_CHUNK; j++)
    words.push(VOCABULARY[(seed + index * 7 + j * 3) % VOCABULARY.length] ?? "");
  return words.join(" ") + (last ? "." : " ");
}

/** The JSON arguments every simulated model calls a tool with, for a prompt. */
export function simulatedToolArguments(prompt: string): string {
  return JSON.stringify({ query: simulatedChunkText(prompt, 0, true).trim(), limit: 3, exact: true });
}

export const tokensOf = (text: string) => Math.ceil(text.length / 4);

/**
 * The function the simulated model calls, when the request declares functions and forces a call
 * (`toolConfig` mode ANY) or the prompt holds `[tool]`: the first allowed one, with the arguments
 * every simulated chat model uses for the prompt.
 */
function functionCallFor(body: any, prompt: string): { name: string; args: unknown } | null {
  const declared: string[] = (Array.isArray(body?.tools) ? body.tools : []).flatMap((t: any) =>
    (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []).map((f: any) => String(f?.name)),
  );
  const config = body?.toolConfig?.functionCallingConfig;
  if (declared.length === 0 || config?.mode === "NONE") return null;
  if (config?.mode !== "ANY" && !prompt.includes("[tool]")) return null;
  const allowed: unknown = config?.allowedFunctionNames;
  const name = Array.isArray(allowed) && allowed.length > 0 ? String(allowed[0]) : (declared[0] as string);
  return { name, args: JSON.parse(simulatedToolArguments(prompt)) };
}

/** The chunks of one answer, each with the cumulative usage so far. */
function answerChunks(sim: GeminiSimRequest, plan: Plan, prompt: { text: string; media: number }) {
  const promptTokens = tokensOf(prompt.text) + prompt.media * MEDIA_PART_TOKENS;
  const responseId = createHash("sha256")
    .update(`${prompt.text}:${sim.state.random()}`)
    .digest("base64url")
    .slice(0, 22);
  const usage = (candidates: number) => ({
    promptTokenCount: promptTokens,
    ...(candidates > 0 ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: promptTokens + candidates + plan.thoughts,
    ...(plan.thoughts > 0 ? { thoughtsTokenCount: plan.thoughts } : {}),
    ...(plan.cached > 0 ? { cachedContentTokenCount: Math.min(plan.cached, promptTokens) } : {}),
    promptTokensDetails: [{ modality: "TEXT", tokenCount: promptTokens }],
  });
  const common = { modelVersion: sim.model, responseId };
  if (plan.blocked) {
    return [
      {
        promptFeedback: {
          blockReason: "SAFETY",
          safetyRatings: [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "HIGH", blocked: true }],
        },
        ...(plan.noUsage ? {} : { usageMetadata: usage(0) }),
        ...common,
      },
    ];
  }
  const call = functionCallFor(sim.body, prompt.text);
  if (call) {
    const tokens = tokensOf(call.name) + tokensOf(JSON.stringify(call.args));
    return [
      {
        candidates: [{ content: { parts: [{ functionCall: call }], role: "model" }, index: 0, finishReason: "STOP" }],
        ...(plan.noUsage ? {} : { usageMetadata: usage(tokens) }),
        ...common,
      },
    ];
  }
  const maxOutput = Number(sim.body?.generationConfig?.maxOutputTokens) || Number.POSITIVE_INFINITY;
  const out: unknown[] = [];
  let produced = 0;
  for (let i = 0; i < plan.chunks; i++) {
    const text = simulatedChunkText(prompt.text, i, i === plan.chunks - 1);
    produced += tokensOf(text);
    const capped = produced >= maxOutput && i < plan.chunks - 1;
    const last = i === plan.chunks - 1 || capped;
    out.push({
      candidates: [
        {
          content: { parts: [{ text }], role: "model" },
          index: 0,
          ...(last ? { finishReason: capped ? "MAX_TOKENS" : "STOP" } : {}),
        },
      ],
      ...(plan.noUsage ? {} : { usageMetadata: usage(produced) }),
      ...common,
    });
    if (capped) break;
  }
  return out;
}

/** All chunks of an answer merged into one synchronous response. */
function merged(chunks: any[]): unknown {
  const last = chunks[chunks.length - 1];
  if (!last?.candidates || chunks.length === 1) return last;
  const text = chunks.map((c) => c.candidates[0].content.parts[0].text).join("");
  return {
    ...last,
    candidates: [{ ...last.candidates[0], content: { parts: [{ text }], role: "model" } }],
  };
}

export function writeAndWait(raw: ServerResponse, text: string): Promise<void> {
  if (raw.destroyed) return Promise.resolve();
  if (raw.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    raw.once("drain", resolve);
    raw.once("close", resolve);
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers a Gemini text request, synchronous or streaming (`alt=sse` or the JSON-array stream). */
export async function answerGeminiText(sim: GeminiSimRequest) {
  const { request, reply, state } = sim;
  const options = state.options.gemini?.text ?? {};
  const prompt = promptOf(sim.body);
  const plan = planFor(options, prompt.text);
  const entry = state.record({
    protocol: "gemini",
    method: request.method,
    path: request.url.replace(/([?&]key=)[^&]*/, "$1[redacted]"),
    headers: request.headers,
    body: sim.body,
  });
  let cutting = false;
  const usageRecord = state.usage.open({ protocol: "gemini", model: sim.model, prompt: prompt.text });
  reply.raw.once("finish", () => {
    if (!cutting) usageRecord.complete = true;
  });
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished && !cutting) entry.aborted = true;
  });

  if (plan.status !== null) {
    const error = ERRORS[plan.status] ?? { message: "error", status: "UNKNOWN" };
    return reply.status(plan.status).send({ error: { code: plan.status, ...error } });
  }
  const chunks = answerChunks(sim, plan, prompt);

  if (sim.method === "generateContent") {
    for (let i = 0; i < chunks.length; i++) {
      await options.beforeChunk?.(i);
      if (i > 0 && plan.delayMs > 0) await sleep(plan.delayMs);
    }
    if (plan.cutAfter !== null) {
      cutting = true;
      reply.raw.destroy();
      return reply;
    }
    const answer = merged(chunks) as { usageMetadata?: ReportedUsage };
    if (answer.usageMetadata) usageRecord.usage.push(answer.usageMetadata);
    return reply.status(200).send(answer);
  }

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": sim.sse ? "text/event-stream" : "application/json; charset=utf-8" });
  const frame = (json: string, index: number) =>
    sim.sse ? `data: ${json}\r\n\r\n` : `${index === 0 ? "[" : ",\r\n"}${json}`;
  for (let i = 0; i < chunks.length; i++) {
    if (plan.cutAfter !== null && i === plan.cutAfter) {
      // Half-close after what was written is flushed: the answer ends without its last chunk.
      cutting = true;
      raw.socket?.end();
      return reply;
    }
    if (plan.truncateAfter !== null && i === plan.truncateAfter) break;
    if (plan.errorAfter !== null && i === plan.errorAfter) {
      const error = { error: { code: 500, ...ERRORS[500] } };
      await writeAndWait(raw, frame(JSON.stringify(error), i));
      raw.end(sim.sse ? undefined : "]");
      return reply;
    }
    await options.beforeChunk?.(i);
    if (i > 0 && plan.delayMs > 0) await sleep(plan.delayMs);
    if (raw.destroyed) return reply;
    const chunk = chunks[i] as { usageMetadata?: ReportedUsage };
    if (chunk.usageMetadata) usageRecord.usage.push(chunk.usageMetadata);
    await writeAndWait(raw, frame(JSON.stringify(chunk), i));
  }
  raw.end(sim.sse ? undefined : "]");
  return reply;
}
