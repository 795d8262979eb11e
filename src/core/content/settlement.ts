import type { TokenUsage } from "../pricing.js";
import { estimateTextTokens } from "./estimate.js";
import type { ContentAccount } from "./usage.js";

/** How a pre-charged content call ends in the ledger. */
export type ContentSettlement = { kind: "refund" } | { kind: "settle"; usage: TokenUsage; estimated: boolean };

/**
 * The billing rule of a finished (or broken, or abandoned) call:
 * - the upstream reported usage: settle to the last cumulative report, whatever happened after;
 * - no usage but text was produced: settle to an estimate (prompt estimate + text produced);
 * - nothing produced: refund everything.
 */
export function settlementFor(account: Pick<ContentAccount, "usage" | "chunks" | "textChars">, promptEstimate: number) {
  if (account.usage) return { kind: "settle", usage: account.usage, estimated: false } as ContentSettlement;
  if (account.chunks > 0 && account.textChars > 0) {
    return {
      kind: "settle",
      usage: { promptTokens: promptEstimate, outputTokens: estimateTextTokens(account.textChars), cachedTokens: 0 },
      estimated: true,
    } as ContentSettlement;
  }
  return { kind: "refund" } as ContentSettlement;
}
