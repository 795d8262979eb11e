import type { DefaultPrice } from "../default-prices.js";
import { defaultUnit } from "../pricing.js";
import type { TokenBucket } from "../token-usage.js";
import { refused } from "./checks.js";
import type { PriceKind } from "./ports.js";
import type { PriceUnit, SetPriceInput, TokenRateField } from "./shapes.js";

/** The bucket of each token rate field of a price body. */
const RATE_BUCKET: Record<TokenRateField | "input_per_million" | "output_per_million", TokenBucket> = {
  input_per_million: "input",
  output_per_million: "output",
  cache_read_per_million: "cacheRead",
  cache_write_5m_per_million: "cacheWrite5m",
  cache_write_1h_per_million: "cacheWrite1h",
  audio_input_per_million: "audioInput",
  reasoning_per_million: "reasoning",
  audio_output_per_million: "audioOutput",
};
const TOKEN_FIELDS = [...Object.keys(RATE_BUCKET), "cached_ratio"] as (keyof SetPriceInput)[];

/** The units a kind's surfaces can count. */
const UNITS_OF_KIND: Record<PriceKind, readonly PriceUnit[]> = {
  task: ["call", "second"],
  image: ["image"],
  content: ["tokens", "character", "second", "search_unit", "call"],
};

/**
 * A price body as the store takes it, checked against its unit: a rate the unit does not take is
 * a 400 naming it (a 0 is taken as not set, as older bodies sent every field), a token price
 * needs `input_per_million` and `output_per_million`, a per-unit price needs `price`.
 */
export function priceInput(b: SetPriceInput): DefaultPrice {
  const unit = b.unit ?? defaultUnit(b.kind, b.name);
  if (!UNITS_OF_KIND[b.kind].includes(unit)) {
    throw refused("unit", `must be one of ${UNITS_OF_KIND[b.kind].join(", ")} for a ${b.kind} price (got ${unit})`);
  }
  const given = (field: keyof SetPriceInput) => b[field] !== undefined && b[field] !== null && b[field] !== 0;
  if (unit !== "tokens") {
    const wrong = TOKEN_FIELDS.find(given);
    if (wrong) throw refused(wrong, `is not a rate of a price per ${unit}; only price is`);
    return { kind: b.kind, name: b.name, unit, price: b.price ?? 0 };
  }
  if (given("price")) throw refused("price", "is not a rate of a token price; use input_per_million and the others");
  for (const field of ["input_per_million", "output_per_million"] as const) {
    if (b[field] === undefined) throw refused(field, "is required for a token price");
  }
  const rates: Partial<Record<TokenBucket, number | null>> = {};
  for (const [field, bucket] of Object.entries(RATE_BUCKET)) {
    const value = b[field as keyof typeof RATE_BUCKET];
    if (value !== undefined) rates[bucket] = value;
  }
  // The older form: a cached ratio is the cache-read rate as a share of input, when no rate is given.
  if (b.cache_read_per_million === undefined && b.cached_ratio !== undefined && b.cached_ratio !== 1) {
    rates.cacheRead = (b.input_per_million ?? 0) * b.cached_ratio;
  }
  return { kind: b.kind, name: b.name, unit, rates };
}
