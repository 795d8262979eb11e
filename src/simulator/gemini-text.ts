import { createHash } from "node:crypto";
import { type Plan, PlannedAnswer, planFor, sleep, writeAndWait, writePlannedSteps } from "./planned-stream.js";
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

/** The prompt tokens a generate call of `body` reports (`promptTokenCount`), as `:countTokens` counts them. */
export function promptTokensOf(body: any): number {
  const prompt = promptOf(body);
  return tokensOf(prompt.text) + prompt.media * MEDIA_PART_TOKENS;
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
  const promptTokens = promptTokensOf(sim.body);
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
  const count = candidatesAsked(sim.body, prompt.text);
  const out: unknown[] = [];
  let produced = 0;
  for (let i = 0; i < plan.chunks; i++) {
    const texts = Array.from({ length: count }, (_, j) =>
      simulatedChunkText(candidatePrompt(prompt.text, j), i, i === plan.chunks - 1),
    );
    produced += texts.reduce((sum, text) => sum + tokensOf(text), 0);
    const capped = produced >= maxOutput && i < plan.chunks - 1;
    const last = i === plan.chunks - 1 || capped;
    out.push({
      candidates: texts.map((text, j) => ({
        content: { parts: [{ text }], role: "model" },
        index: j,
        ...(last ? { finishReason: capped ? "MAX_TOKENS" : "STOP" } : {}),
      })),
      ...(plan.noUsage ? {} : { usageMetadata: usage(produced) }),
      ...common,
    });
    if (capped) break;
  }
  return out;
}

/**
 * How many candidates an answer has: `generationConfig.candidateCount` (1 to 8), as Gemini does;
 * a prompt holding `[one candidate]` answers one whatever was asked (a model that ignores it).
 */
function candidatesAsked(body: any, prompt: string): number {
  const asked = Number(body?.generationConfig?.candidateCount);
  if (prompt.includes("[one candidate]") || !Number.isInteger(asked) || asked < 1) return 1;
  return Math.min(asked, 8);
}

/** The prompt candidate `j` is seeded with: the first candidate answers as a one-candidate call. */
function candidatePrompt(prompt: string, j: number): string {
  return j === 0 ? prompt : `${prompt}#${j}`;
}

/** All chunks of an answer merged into one synchronous response. */
function merged(chunks: any[]): unknown {
  const last = chunks[chunks.length - 1];
  if (!last?.candidates || chunks.length === 1) return last;
  return {
    ...last,
    candidates: last.candidates.map((candidate: any, j: number) => ({
      ...candidate,
      content: { parts: [{ text: chunks.map((c) => c.candidates[j].content.parts[0].text).join("") }], role: "model" },
    })),
  };
}

/**
 * `:countTokens` (a body of `contents` or a `generateContentRequest`): the prompt tokens a generate
 * call would report; the prompt's status markers (`[429]`, `[500]`) fail it as they fail a call.
 */
export function answerGeminiCount(sim: Omit<GeminiSimRequest, "method" | "sse">) {
  const { request, reply, state } = sim;
  const path = request.url.replace(/([?&]key=)[^&]*/, "$1[redacted]");
  PlannedAnswer.received(state, "gemini", request, reply, sim.body, path);
  const body = sim.body?.generateContentRequest ?? sim.body;
  const plan = planFor(state.options.gemini?.text ?? {}, promptOf(body).text);
  if (plan.status !== null) {
    const error = ERRORS[plan.status] ?? { message: "error", status: "UNKNOWN" };
    return reply.status(plan.status).send({ error: { code: plan.status, ...error } });
  }
  const totalTokens = promptTokensOf(body);
  return reply.status(200).send({ totalTokens, promptTokensDetails: [{ modality: "TEXT", tokenCount: totalTokens }] });
}

/** Answers a Gemini text request, synchronous or streaming (`alt=sse` or the JSON-array stream). */
export async function answerGeminiText(sim: GeminiSimRequest) {
  const { request, reply, state } = sim;
  const options = state.options.gemini?.text ?? {};
  const prompt = promptOf(sim.body);
  const plan = planFor(options, prompt.text);
  const path = request.url.replace(/([?&]key=)[^&]*/, "$1[redacted]");
  const answer = PlannedAnswer.received(state, "gemini", request, reply, sim.body, path);
  const usageRecord = state.usage.open({ protocol: "gemini", model: sim.model, prompt: prompt.text });
  reply.raw.once("finish", () => {
    if (!answer.cutting) usageRecord.complete = true;
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
    if (answer.cutWhole(plan)) return reply;
    const whole = merged(chunks) as { usageMetadata?: ReportedUsage };
    if (whole.usageMetadata) usageRecord.usage.push(whole.usageMetadata);
    return reply.status(200).send(whole);
  }

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": sim.sse ? "text/event-stream" : "application/json; charset=utf-8" });
  const frame = (json: string, index: number) =>
    sim.sse ? `data: ${json}\r\n\r\n` : `${index === 0 ? "[" : ",\r\n"}${json}`;
  const end = () => raw.end(sim.sse ? undefined : "]");
  const complete = await writePlannedSteps(raw, plan, answer, chunks.length, {
    beforeChunk: options.beforeChunk,
    truncate: end,
    async error(i) {
      await writeAndWait(raw, frame(JSON.stringify({ error: { code: 500, ...ERRORS[500] } }), i));
      end();
    },
    async write(i) {
      const chunk = chunks[i] as { usageMetadata?: ReportedUsage };
      if (chunk.usageMetadata) usageRecord.usage.push(chunk.usageMetadata);
      await writeAndWait(raw, frame(JSON.stringify(chunk), i));
    },
  });
  if (complete) end();
  return reply;
}
