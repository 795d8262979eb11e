import { createHash } from "node:crypto";
import { simulatedChunkText, simulatedToolArguments, tokensOf } from "./gemini-text.js";
import { type Plan, planFor } from "./planned-stream.js";

export { simulatedToolArguments };

import type { GeminiTextSimOptions } from "./options.js";

/** Tokens the simulated chat models bill for one input image. */
export const SIM_IMAGE_TOKENS = 85;

/** A chat request as every simulated chat protocol reads it. */
export interface ChatScriptInput {
  /** Text of every message and system instruction, joined: prompt markers are read from it. */
  prompt: string;
  images: number;
  toolNames: string[];
  /** The tool the request forces, or "any" for a forced call to the first tool. */
  forcedTool: string | null;
  toolsDisabled: boolean;
  maxTokens: number | null;
  n: number;
}

export interface ScriptChoice {
  /** Text pieces, one per streamed chunk. */
  pieces: string[];
  tool: { id: string; name: string; argPieces: string[] } | null;
  finish: "stop" | "length" | "tool";
}

export interface ChatScript {
  plan: Plan;
  id: string;
  choices: ScriptChoice[];
  usage: { prompt: number; completion: number; cached: number; reasoning: number };
}

/** Cuts text into `count` pieces (the last takes the rest). */
function split(text: string, count: number): string[] {
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(text.slice(i * size, (i + 1) * size));
  return out.filter((p) => p !== "");
}

/**
 * The answer a simulated chat model gives: deterministic text from the prompt (the Gemini text
 * model's words), or a call of a tool when the request offers tools and forces one or the prompt
 * holds `[tool]`; output capped at `maxTokens` (finish `length`); the same fault markers as the
 * Gemini text model (`[429]`, `[cut]`, `[slow]`, `[nousage]`, `[cached]`, `[thoughts]`...).
 */
export function chatScript(input: ChatScriptInput, options: GeminiTextSimOptions, salt: number): ChatScript {
  const plan = planFor(options, input.prompt);
  const promptTokens = tokensOf(input.prompt) + input.images * SIM_IMAGE_TOKENS;
  const id = createHash("sha256").update(`${input.prompt}:${salt}`).digest("hex").slice(0, 24);
  const wantsTool =
    input.toolNames.length > 0 &&
    !input.toolsDisabled &&
    (input.forcedTool !== null || input.prompt.includes("[tool]"));
  const choices: ScriptChoice[] = [];
  let completion = plan.thoughts;
  for (let c = 0; c < Math.max(1, input.n); c++) {
    const seedText = c === 0 ? input.prompt : `${input.prompt}#${c}`;
    if (wantsTool) {
      const name = input.forcedTool && input.forcedTool !== "any" ? input.forcedTool : (input.toolNames[0] as string);
      const args = simulatedToolArguments(seedText);
      completion += tokensOf(name) + tokensOf(args);
      choices.push({
        pieces: [],
        tool: { id: `call_${id.slice(0, 12)}${c}`, name, argPieces: split(args, plan.chunks) },
        finish: "tool",
      });
      continue;
    }
    const pieces: string[] = [];
    let produced = 0;
    let finish: ScriptChoice["finish"] = "stop";
    for (let i = 0; i < plan.chunks; i++) {
      const text = simulatedChunkText(seedText, i, i === plan.chunks - 1);
      pieces.push(text);
      produced += tokensOf(text);
      if (input.maxTokens !== null && produced >= input.maxTokens && i < plan.chunks - 1) {
        finish = "length";
        break;
      }
    }
    completion += produced;
    choices.push({ pieces, tool: null, finish });
  }
  return {
    plan,
    id,
    choices,
    usage: { prompt: promptTokens, completion, cached: Math.min(plan.cached, promptTokens), reasoning: plan.thoughts },
  };
}
