import { createHash, randomBytes } from "node:crypto";

/** Crockford's base32: no I, L, O or U, so a code read aloud or typed is not mistaken. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** Random characters of a code: 20 of 32 symbols, 100 bits. */
const RANDOM_CHARS = 20;
const GROUP = 5;

/**
 * A new redemption code: the batch's name prefix (if any), then 20 random characters in groups of
 * five, e.g. `GIFT-7KQ2M-X9D4T-H1VRB-03ZNE`. 256 is a multiple of 32, so a byte's low five bits
 * pick a symbol without bias.
 */
export function newRedemptionCode(prefix: string): string {
  const bytes = randomBytes(RANDOM_CHARS);
  let body = "";
  for (let i = 0; i < RANDOM_CHARS; i++) {
    if (i > 0 && i % GROUP === 0) body += "-";
    body += ALPHABET[(bytes[i] as number) & 31];
  }
  return prefix ? `${prefix}-${body}` : body;
}

/** A code as typed (any case, with or without dashes and spaces) in the one form that is hashed. */
export function normalizeCode(code: string): string {
  return code.replace(/[\s-]+/g, "").toUpperCase();
}

/** What the store keeps to find a code: the SHA-256 of its normal form, in hex. */
export function codeHash(code: string): string {
  return createHash("sha256")
    .update(`redemption:${normalizeCode(code)}`)
    .digest("hex");
}

/** The part of a code lists show: its prefix and first four random characters, and its last four. */
export function shownCode(code: string): string {
  const dash = code.length - (RANDOM_CHARS + RANDOM_CHARS / GROUP - 1);
  const head = code.slice(0, dash + 4);
  return `${head}…${code.slice(-4)}`;
}
