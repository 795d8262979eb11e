/** Price rules: base price (currency units) x group ratio x channel ratio, in integer quota. */

export interface Ratios {
  groupRatio: number;
  channelRatio: number;
  quotaPerUnit: number;
}

/** Quota for a per-call price (a task action, one image). Rounded up: never free by rounding. */
export function quotaForCall(price: number, ratios: Ratios): number {
  return Math.ceil(round6(price * ratios.quotaPerUnit * ratios.groupRatio * ratios.channelRatio));
}

export interface TokenPrice {
  /** Currency units per million input tokens. */
  inputPerMillion: number;
  /** Currency units per million output tokens. */
  outputPerMillion: number;
  /** Fraction of the input price paid for cached input tokens. */
  cachedRatio: number;
}

export interface TokenUsage {
  promptTokens: number;
  /** Billable output: candidates + thoughts. */
  outputTokens: number;
  /** Part of the prompt served from cache. */
  cachedTokens: number;
}

/** Quota for token usage of a content model. Rounded up. */
export function quotaForTokens(usage: TokenUsage, price: TokenPrice, ratios: Ratios): number {
  const cached = Math.min(Math.max(0, usage.cachedTokens), Math.max(0, usage.promptTokens));
  const freshInput = Math.max(0, usage.promptTokens) - cached;
  const units =
    (freshInput * price.inputPerMillion +
      cached * price.inputPerMillion * price.cachedRatio +
      Math.max(0, usage.outputTokens) * price.outputPerMillion) /
    1_000_000;
  return Math.ceil(round6(units * ratios.quotaPerUnit * ratios.groupRatio * ratios.channelRatio));
}

/** Cuts float noise (0.1 * 3 = 0.30000000000000004) before rounding up. */
function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
