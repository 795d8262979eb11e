import type { TokenPrice } from "../pricing.js";

/**
 * The price of an embedding model: the input rate of its token price (a `content` row named by
 * the model); an embedding has no output, so the output rate is never read. The one place the
 * embeddings surface reads a price row.
 */
export function embeddingPrice(price: TokenPrice | null): TokenPrice | null {
  return price && { input: price.input, output: 0 };
}
