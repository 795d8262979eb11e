import { outputTokensOf, promptTokensOf, type ReportedUsage, tokenUsage } from "../token-usage.js";

/** About four characters of text make one token. Rounded up. */
export function estimateTextTokens(chars: number): number {
  return Math.ceil(Math.max(0, chars) / 4);
}

/** What a token-priced answer has produced so far (content's and chat's accounts). */
export interface TokenAccount {
  /** The last usage the upstream reported; null while it reported none. */
  readonly usage: ReportedUsage | null;
  /** Chunks or events seen (a whole answer counts as one). */
  chunks: number;
  /** Characters of output text seen. */
  textChars: number;
}

/** How a pre-charged token-priced call ends in the ledger. */
export type TokenSettlement = { kind: "refund" } | { kind: "settle"; usage: ReportedUsage; estimated: boolean };

/**
 * The billing rule of a finished (or broken, or abandoned) call:
 * - the upstream reported usage: settle to the last cumulative report, whatever happened after;
 * - no usage but text was produced: settle to an estimate (prompt estimate + text produced);
 * - nothing produced: refund everything.
 * A report of no tokens at all for an answer that delivered text is no report: an upstream that
 * sends zeros in place of its usage (an Anthropic-shaped stream always carries the fields) would
 * otherwise bill a delivered answer at 0.
 */
export function settlementFor(account: TokenAccount, promptEstimate: number) {
  const u = account.usage;
  const saysNothing = u !== null && promptTokensOf(u) === 0 && outputTokensOf(u) === 0 && account.textChars > 0;
  if (u && !saysNothing) return { kind: "settle", usage: u, estimated: false } as TokenSettlement;
  if (account.chunks > 0 && account.textChars > 0) {
    return {
      kind: "settle",
      usage: tokenUsage({ input: promptEstimate, output: estimateTextTokens(account.textChars) }),
      estimated: true,
    } as TokenSettlement;
  }
  return { kind: "refund" } as TokenSettlement;
}
