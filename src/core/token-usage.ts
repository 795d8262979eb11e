/**
 * A token-priced call's usage as disjoint buckets: every token the upstream reported is in exactly
 * one bucket, and each bucket has its own rate (see pricing.ts and docs/price-model.md).
 */

/** The buckets, in the order they are shown: input side first, then output side. */
export const TOKEN_BUCKETS = [
  "input",
  "cacheRead",
  "cacheWrite5m",
  "cacheWrite1h",
  "audioInput",
  "output",
  "reasoning",
  "audioOutput",
] as const;

export type TokenBucket = (typeof TOKEN_BUCKETS)[number];

/** Buckets that count prompt tokens. */
export const INPUT_BUCKETS: readonly TokenBucket[] = [
  "input",
  "cacheRead",
  "cacheWrite5m",
  "cacheWrite1h",
  "audioInput",
];
/** Buckets that count output tokens. */
export const OUTPUT_BUCKETS: readonly TokenBucket[] = ["output", "reasoning", "audioOutput"];

/** The bucket's name where the store, the admin API and the CLI show it (`cache_write_5m`). */
export const BUCKET_NAMES: Record<TokenBucket, string> = {
  input: "input",
  cacheRead: "cache_read",
  cacheWrite5m: "cache_write_5m",
  cacheWrite1h: "cache_write_1h",
  audioInput: "audio_input",
  output: "output",
  reasoning: "reasoning",
  audioOutput: "audio_output",
};

/** Tokens per bucket; no token is in two buckets. */
export type TokenUsage = Record<TokenBucket, number>;

/**
 * Usage as an upstream family's reader found it: the buckets, and the fields it had to clamp
 * (a negative count, a fraction, a part above its whole), named for the warning the settlement logs.
 */
export type ReportedUsage = TokenUsage & { clamped?: readonly string[] };

/** A usage with the given buckets and every other bucket at 0. */
export function tokenUsage(buckets: Partial<TokenUsage>): TokenUsage {
  return {
    input: buckets.input ?? 0,
    cacheRead: buckets.cacheRead ?? 0,
    cacheWrite5m: buckets.cacheWrite5m ?? 0,
    cacheWrite1h: buckets.cacheWrite1h ?? 0,
    audioInput: buckets.audioInput ?? 0,
    output: buckets.output ?? 0,
    reasoning: buckets.reasoning ?? 0,
    audioOutput: buckets.audioOutput ?? 0,
  };
}

/** Every prompt token (fresh, cached, written to a cache, audio): what "prompt tokens" means to a client. */
export function promptTokensOf(u: TokenUsage): number {
  return u.input + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h + u.audioInput;
}

/** Every output token (text, reasoning, audio). */
export function outputTokensOf(u: TokenUsage): number {
  return u.output + u.reasoning + u.audioOutput;
}

/** Prompt tokens written to a cache, either duration. */
export function cacheWriteTokensOf(u: TokenUsage): number {
  return u.cacheWrite5m + u.cacheWrite1h;
}

/**
 * Reads the counts of one usage report, clamping what cannot be a count and naming each clamp.
 * An absent field is 0 and fine; a negative one or one that is not a number is 0, a fraction is
 * rounded down.
 */
export class UsageReader {
  readonly clamped: string[] = [];

  count(value: unknown, field: string): number {
    if (value === undefined || value === null) return 0;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      this.clamped.push(`${field} ${String(value)} read as 0`);
      return 0;
    }
    if (!Number.isInteger(value)) {
      this.clamped.push(`${field} ${value} read as ${Math.floor(value)}`);
      return Math.floor(value);
    }
    return value;
  }

  /**
   * Takes `part` (already read) out of `left`, the part of a whole not yet taken: a part larger
   * than what is left is clamped to it. Returns the part as taken.
   */
  part(part: number, left: number, field: string, whole: string): number {
    if (part <= left) return part;
    this.clamped.push(`${field} ${part} is more than the ${left} left of ${whole}: read as ${left}`);
    return left;
  }

  /** The usage, with the clamps named when there were any. */
  done(buckets: Partial<TokenUsage>): ReportedUsage {
    const usage = tokenUsage(buckets);
    return this.clamped.length > 0 ? { ...usage, clamped: [...this.clamped] } : usage;
  }
}
