/** Price rules: base price (currency units) x group ratio x channel ratio, in integer quota. */
import { INPUT_BUCKETS, OUTPUT_BUCKETS, TOKEN_BUCKETS, type TokenBucket, type TokenUsage } from "./token-usage.js";

/** What a price counts (docs/price-model.md): one call, one image, seconds, characters, search units, tokens. */
export const PRICE_UNITS = ["call", "image", "second", "character", "search_unit", "tokens"] as const;
export type PriceUnit = (typeof PRICE_UNITS)[number];

/** The unit a price of `kind` named `name` counts when none is given: what each kind counted before units. */
export function defaultUnit(kind: string, name: string): PriceUnit {
  if (kind === "image") return "image";
  if (kind === "content") return "tokens";
  return name.startsWith("video:") ? "second" : "call";
}

export interface Ratios {
  groupRatio: number;
  channelRatio: number;
  quotaPerUnit: number;
}

/** Quota for a per-call price (a task action, one image). Rounded up: never free by rounding. */
export function quotaForCall(price: number, ratios: Ratios): number {
  return Math.ceil(round6(price * ratios.quotaPerUnit * ratios.groupRatio * ratios.channelRatio));
}

/**
 * A token price: currency units per million tokens of each bucket. `input` and `output` are always
 * set; a bucket whose rate is absent (or null) is billed at the rate it falls back to (`FALLBACK`).
 */
export type TokenPrice = { input: number; output: number } & {
  [B in Exclude<TokenBucket, "input" | "output">]?: number | null;
};

/** The rate an empty bucket rate falls back to: a price with only input and output bills as it always did. */
export const FALLBACK: Record<Exclude<TokenBucket, "input" | "output">, TokenBucket> = {
  cacheRead: "input",
  cacheWrite5m: "input",
  cacheWrite1h: "cacheWrite5m",
  audioInput: "input",
  reasoning: "output",
  audioOutput: "output",
};

/** The rate a bucket is billed at (per million tokens), following the fallbacks of empty rates. */
export function rateOf(price: TokenPrice, bucket: TokenBucket): number {
  if (bucket === "input" || bucket === "output") return price[bucket];
  const set = price[bucket];
  return set === undefined || set === null ? rateOf(price, FALLBACK[bucket]) : set;
}

/** The bucket whose rate a bucket's empty rate is read from, or null when its own rate is set. */
export function fallbackOf(price: TokenPrice, bucket: TokenBucket): TokenBucket | null {
  if (bucket === "input" || bucket === "output") return null;
  const set = price[bucket];
  return set === undefined || set === null ? FALLBACK[bucket] : null;
}

/**
 * A price as it was set before buckets had their own rates: one `cachedRatio` of the input price
 * for cached input. A ratio of 1 leaves `cacheRead` empty (it falls back to input, the same rate).
 */
export function tokenPriceFromRatio(
  inputPerMillion: number,
  outputPerMillion: number,
  cachedRatio: number,
): TokenPrice {
  return {
    input: inputPerMillion,
    output: outputPerMillion,
    ...(cachedRatio === 1 ? {} : { cacheRead: inputPerMillion * cachedRatio }),
  };
}

/**
 * Quota for token usage: every bucket's tokens at its rate, summed exactly, then rounded up once
 * (no bucket is rounded on its own). A negative count is read as 0.
 */
export function quotaForTokens(usage: TokenUsage, price: TokenPrice, ratios: Ratios): number {
  let perMillion = 0;
  for (const bucket of TOKEN_BUCKETS) perMillion += Math.max(0, usage[bucket]) * rateOf(price, bucket);
  return quotaOfUnits(perMillion / 1_000_000, ratios);
}

/**
 * The hold of a token-priced call: its worst case, whatever bucket its tokens land in. Every prompt
 * token of `worst` at the dearest input-side rate, every output token at the dearest output-side one.
 */
export function holdQuotaForTokens(worst: TokenUsage, price: TokenPrice, ratios: Ratios): number {
  const side = (buckets: readonly TokenBucket[]) => {
    let tokens = 0;
    let rate = 0;
    for (const b of buckets) {
      tokens += Math.max(0, worst[b]);
      rate = Math.max(rate, rateOf(price, b));
    }
    return tokens * rate;
  };
  return quotaOfUnits((side(INPUT_BUCKETS) + side(OUTPUT_BUCKETS)) / 1_000_000, ratios);
}

function quotaOfUnits(units: number, ratios: Ratios): number {
  return Math.ceil(round6(units * ratios.quotaPerUnit * ratios.groupRatio * ratios.channelRatio));
}

/** Cuts float noise (0.1 * 3 = 0.30000000000000004) before rounding up. */
function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
