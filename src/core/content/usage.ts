import { type ReportedUsage, UsageReader } from "../token-usage.js";

/** Google's `usageMetadata` as far as billing reads it. Every count is cumulative. */
export interface UsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

/**
 * Billable usage from one `usageMetadata` object, or null when the object carries none.
 * `promptTokenCount` includes the cached part: input = prompt - cached + tool-use prompt;
 * cache_read = cached; output = candidates; reasoning = thoughts (billed as output unless priced).
 */
export function usageFromMetadata(meta: unknown): ReportedUsage | null {
  if (!meta || typeof meta !== "object") return null;
  const m = meta as Record<string, unknown>;
  const read = new UsageReader();
  const prompt = read.count(m.promptTokenCount, "promptTokenCount");
  const cached = read.part(
    read.count(m.cachedContentTokenCount, "cachedContentTokenCount"),
    prompt,
    "cachedContentTokenCount",
    "promptTokenCount",
  );
  return read.done({
    input: prompt - cached + read.count(m.toolUsePromptTokenCount, "toolUsePromptTokenCount"),
    cacheRead: cached,
    output: read.count(m.candidatesTokenCount, "candidatesTokenCount"),
    reasoning: read.count(m.thoughtsTokenCount, "thoughtsTokenCount"),
  });
}

/** The text of every candidate part of one response chunk (thought parts included: they are output too). */
export function chunkText(chunk: unknown): string {
  const candidates = (chunk as { candidates?: unknown })?.candidates;
  if (!Array.isArray(candidates)) return "";
  let text = "";
  for (const candidate of candidates) {
    const parts = (candidate as { content?: { parts?: unknown } })?.content?.parts;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const t = (part as { text?: unknown })?.text;
      if (typeof t === "string") text += t;
    }
  }
  return text;
}

/** Whether a chunk ends the answer: Google's last chunk carries a finishReason or a blockReason. */
export function isFinal(chunk: unknown): boolean {
  const c = chunk as { candidates?: unknown; promptFeedback?: { blockReason?: unknown } };
  if (c?.promptFeedback?.blockReason) return true;
  return (
    Array.isArray(c?.candidates) && c.candidates.some((x) => Boolean((x as { finishReason?: unknown })?.finishReason))
  );
}

/**
 * What one relayed answer has produced so far: the last cumulative usage the upstream reported
 * (never a sum: every chunk repeats the running total) and the amount of text, for answers that
 * report no usage at all.
 */
export class ContentAccount {
  /** Usage of the last chunk that carried `usageMetadata`; null while none did. */
  usage: ReportedUsage | null = null;
  /** Response chunks seen (a synchronous answer counts as one). */
  chunks = 0;
  /** Characters of candidate text seen. */
  textChars = 0;
  /** A chunk said the answer is complete (a finishReason, or a prompt blocked for safety). */
  complete = false;

  observe(chunk: unknown): void {
    this.chunks += 1;
    if (isFinal(chunk)) this.complete = true;
    this.textChars += chunkText(chunk).length;
    const usage = usageFromMetadata((chunk as { usageMetadata?: unknown })?.usageMetadata);
    if (usage) this.usage = usage;
  }
}
