import { timingSafeEqual } from "node:crypto";
import { newAdminKey, sha256Hex } from "../core/ids.js";
import type { Settings } from "../store/settings.js";

const SETTING = "admin_key_sha256";

/**
 * Where the admin key's hash comes from: ADMIN_KEY when set; otherwise the stored hash; on the
 * very first start a new key is generated, only its hash is kept, and the plain key is returned
 * once for the caller to print.
 */
export async function resolveAdminKeyHash(
  settings: Settings,
  configured: string | null,
): Promise<{ hash: string; generated: string | null }> {
  if (configured) return { hash: sha256Hex(configured), generated: null };
  const stored = await settings.get<string>(SETTING);
  if (stored !== undefined) return { hash: stored, generated: null };
  const key = newAdminKey();
  const hash = sha256Hex(key);
  if (!(await settings.setIfAbsent(SETTING, hash))) {
    // Another instance generated one at the same moment: that one stands.
    return { hash: (await settings.get<string>(SETTING)) as string, generated: null };
  }
  return { hash, generated: key };
}

/**
 * A new admin key for a lost one: only its hash is stored, the plain key is returned once for the
 * caller to print. Gateways that take their key from the store see it within `ADMIN_KEY_TTL_MS`.
 */
export async function resetAdminKey(settings: Settings): Promise<string> {
  const key = newAdminKey();
  await settings.set(SETTING, sha256Hex(key));
  return key;
}

/** How long a gateway keeps the stored admin key hash before reading it again. */
export const ADMIN_KEY_TTL_MS = 10_000;

/**
 * The admin key hash a gateway checks against: fixed when ADMIN_KEY is set, else the stored one,
 * read again every `ttlMs` so that a key reset from the command line reaches running gateways.
 */
export function adminKeyHashSource(
  settings: Settings,
  configured: string | null,
  initialHash: string,
  ttlMs = ADMIN_KEY_TTL_MS,
  now: () => number = Date.now,
): () => Promise<string> {
  if (configured) return async () => initialHash;
  let hash = initialHash;
  let readAt = now();
  return async () => {
    if (now() - readAt >= ttlMs) {
      readAt = now();
      hash = (await settings.get<string>(SETTING)) ?? hash;
    }
    return hash;
  };
}

/** Compares a presented key with the stored hash in constant time. */
export function adminKeyMatches(presented: string | null, expectedHash: string): boolean {
  const a = Buffer.from(sha256Hex(presented ?? ""), "hex");
  const b = Buffer.from(expectedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b) && presented !== null && presented !== "";
}
