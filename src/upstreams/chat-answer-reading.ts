import type { ChatEvent, ChatFinishReason } from "../core/chat/canonical.js";

/**
 * What every chat vendor's answer reader reads the same way, leniently: a token count, a finish
 * word looked up in the vendor's table, and an answer's id and model.
 */

/** A token count as an answer reports it: a positive finite number, floored; anything else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** A vendor's finish word in canonical form, by the vendor's table; an unknown word counts as a natural stop. */
export function finishByTable(table: Record<string, ChatFinishReason>, reason: unknown): ChatFinishReason {
  return (typeof reason === "string" && table[reason]) || "stop";
}

/** An answer's id and model as sent: an id that is not a string is empty, a model that is not one the one asked for. */
export function answerIdentity(id: unknown, model: unknown, fallbackModel: string): { id: string; model: string } {
  return { id: typeof id === "string" ? id : "", model: typeof model === "string" ? model : fallbackModel };
}

/** A stream's `start` event, given once: at its first chunk, with the id and model that chunk carries. */
export class StreamStart {
  private started = false;

  constructor(private readonly fallbackModel: string) {}

  /** The start event at the first chunk, null at every later one. */
  at(id: unknown, model: unknown): Extract<ChatEvent, { type: "start" }> | null {
    if (this.started) return null;
    this.started = true;
    return { type: "start", ...answerIdentity(id, model, this.fallbackModel) };
  }
}
