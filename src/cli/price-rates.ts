import { TOKEN_RATE_FALLBACK, TOKEN_RATE_FIELDS } from "../contracts/admin.js";
import type { PriceView } from "../core/admin/shapes.js";

/** What one `price` of a unit is for. */
const PER_UNIT: Record<string, string> = {
  call: "per call",
  image: "per image",
  second: "per second",
  character: "per million characters",
  search_unit: "per thousand search units",
};

/** A rate field's short name (`cache_write_5m`). */
const short = (field: string) => field.replace(/_per_million$/, "");

/**
 * Every rate of a price with its unit, as `price list` prints it: an empty token rate is shown as
 * the rate it falls back to (`cache_read = input`), never as 0.
 */
export function priceRatesText(p: PriceView): string {
  if (p.unit !== "tokens") return `${p.price} ${PER_UNIT[p.unit] ?? `per ${p.unit}`}`;
  const parts = [`input ${p.input_per_million}`, `output ${p.output_per_million}`];
  for (const field of TOKEN_RATE_FIELDS) {
    const rate = p[field];
    parts.push(rate === null ? `${short(field)} = ${short(TOKEN_RATE_FALLBACK[field])}` : `${short(field)} ${rate}`);
  }
  return `${parts.join(", ")} (per million tokens)`;
}
