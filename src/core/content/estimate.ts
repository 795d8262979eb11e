import { estimateTextTokens } from "../metering/token-settlement.js";

/** Tokens assumed for one inline or file part (an image is billed at 258 tokens by Gemini). */
export const MEDIA_PART_TOKENS = 258;

function partsOf(content: unknown): unknown[] {
  const parts = (content as { parts?: unknown })?.parts;
  return Array.isArray(parts) ? parts : [];
}

/**
 * A likely prompt size, for settling a call whose upstream reported no usage: text of every
 * content and of the system instruction at four characters a token, plus a fixed amount per
 * inline or file part. Not a bound: the hold before a call is `holdUsage` (hold.ts).
 */
export function estimatePromptTokens(body: unknown): number {
  const b = (body ?? {}) as { contents?: unknown; systemInstruction?: unknown };
  const contents = Array.isArray(b.contents) ? [...b.contents] : [];
  if (b.systemInstruction) contents.push(b.systemInstruction);
  let chars = 0;
  let media = 0;
  for (const content of contents) {
    for (const part of partsOf(content)) {
      const p = part as { text?: unknown; inlineData?: unknown; fileData?: unknown };
      if (typeof p?.text === "string") chars += p.text.length;
      else if (p?.inlineData || p?.fileData) media += 1;
    }
  }
  return estimateTextTokens(chars) + media * MEDIA_PART_TOKENS;
}
