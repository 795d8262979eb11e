import type { PriceUnit } from "./pricing.js";
import type { TokenBucket } from "./token-usage.js";

/**
 * Prices a fresh store starts with (currency units). Operators change them at run time through
 * the admin API; a stored price is never overwritten by these defaults.
 */
export interface DefaultPrice {
  kind: "task" | "image" | "content";
  name: string;
  /** What is counted; by default the kind's own unit (see `defaultUnit`). */
  unit?: PriceUnit;
  price?: number;
  inputPerMillion?: number;
  outputPerMillion?: number;
  cachedRatio?: number;
  /** A token price's rates per million tokens by bucket; an absent or null rate falls back. */
  rates?: Partial<Record<TokenBucket, number | null>>;
}

/**
 * An Anthropic model's price from its input and output rates, with Anthropic's own multipliers
 * of the input rate: a 5-minute cache write 1.25x, a 1-hour one 2x, a cache read 0.1x.
 */
function anthropicPrice(name: string, input: number, output: number): DefaultPrice {
  return {
    kind: "content",
    name,
    rates: { input, output, cacheWrite5m: input * 1.25, cacheWrite1h: input * 2, cacheRead: input * 0.1 },
  };
}

export const DEFAULT_PRICES: readonly DefaultPrice[] = [
  { kind: "task", name: "audioa:MUSIC", price: 0.1 },
  { kind: "task", name: "audioa:REPLACE", price: 0.06 },
  { kind: "task", name: "audioa:INSTRUMENTALS_SWAP", price: 0.06 },
  { kind: "task", name: "audiob:MUSIC", price: 0.1 },
  // The further actions, both families: a song's worth for those that make a new song, a little
  // for lyric sheets and for turning a clip into files.
  ...["audioa", "audiob"].flatMap((family): DefaultPrice[] => [
    { kind: "task", name: `${family}:LYRICS`, price: 0.005 },
    { kind: "task", name: `${family}:EXTEND`, price: 0.1 },
    { kind: "task", name: `${family}:COVER`, price: 0.1 },
    { kind: "task", name: `${family}:ADD_INSTRUMENTAL`, price: 0.1 },
    { kind: "task", name: `${family}:ADD_VOCALS`, price: 0.1 },
    { kind: "task", name: `${family}:VOCALS_SWAP`, price: 0.1 },
    { kind: "task", name: `${family}:STEMS`, price: 0.02 },
    { kind: "task", name: `${family}:WAV`, price: 0.01 },
    { kind: "task", name: `${family}:MUSIC_VIDEO`, price: 0.02 },
    { kind: "task", name: `${family}:UPLOAD`, price: 0.01 },
  ]),
  // Videos: per second of video (a task costs the price times its `seconds`); the row's name is
  // `video:<model>`, and a model without a row is unknown to the videos surface.
  { kind: "task", name: "video:sora-2", price: 0.1 },
  { kind: "task", name: "video:sora-2-pro", price: 0.3 },
  { kind: "image", name: "image-model", price: 0.039 },
  { kind: "image", name: "image-model-pro-1k", price: 0.134 },
  { kind: "image", name: "image-model-pro-2k", price: 0.134 },
  { kind: "image", name: "image-model-pro-4k", price: 0.24 },
  { kind: "image", name: "image-model-2-0.5k", price: 0.045 },
  { kind: "image", name: "image-model-2-1k", price: 0.067 },
  { kind: "image", name: "image-model-2-2k", price: 0.101 },
  { kind: "image", name: "image-model-2-4k", price: 0.151 },
  { kind: "content", name: "gemini-2.5-flash", inputPerMillion: 0.3, outputPerMillion: 2.5, cachedRatio: 0.1 },
  { kind: "content", name: "gemini-2.5-pro", inputPerMillion: 1.25, outputPerMillion: 10, cachedRatio: 0.1 },
  { kind: "content", name: "gemini-2.5-flash-lite", inputPerMillion: 0.1, outputPerMillion: 0.4, cachedRatio: 0.1 },
  anthropicPrice("claude-sonnet-4-5", 3, 15),
  anthropicPrice("claude-opus-4-1", 15, 75),
  anthropicPrice("claude-haiku-4-5", 1, 5),
  // Embedding models: billed per input token at the input rate (they produce no output tokens).
  { kind: "content", name: "text-embedding-3-small", inputPerMillion: 0.02, outputPerMillion: 0, cachedRatio: 1 },
  { kind: "content", name: "text-embedding-3-large", inputPerMillion: 0.13, outputPerMillion: 0, cachedRatio: 1 },
  { kind: "content", name: "gemini-embedding-001", inputPerMillion: 0.15, outputPerMillion: 0, cachedRatio: 1 },
];
