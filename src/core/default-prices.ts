/**
 * Prices a fresh store starts with (currency units). Operators change them at run time through
 * the admin API; a stored price is never overwritten by these defaults.
 */
export interface DefaultPrice {
  kind: "task" | "image" | "content";
  name: string;
  price?: number;
  inputPerMillion?: number;
  outputPerMillion?: number;
  cachedRatio?: number;
}

export const DEFAULT_PRICES: readonly DefaultPrice[] = [
  { kind: "task", name: "audioa:MUSIC", price: 0.1 },
  { kind: "task", name: "audioa:REPLACE", price: 0.06 },
  { kind: "task", name: "audioa:INSTRUMENTALS_SWAP", price: 0.06 },
  { kind: "task", name: "audiob:MUSIC", price: 0.1 },
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
];
