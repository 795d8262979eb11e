import { createHash, randomBytes } from "node:crypto";
import { v7 as uuidV7 } from "uuid";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 text (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const b of bytes) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newTaskId(): string {
  return `task_${randomBase62(32)}`;
}

export function newTokenKey(): string {
  return `sk-${randomBase62(48)}`;
}

export function newAdminKey(): string {
  return `adm-${randomBase62(48)}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * A request id: a UUID whose leading bits are the time (version 7), so that ids made one after
 * another sort one after another. Ledger references are built from them, and the ledger's index
 * on references then grows at its end instead of at random places: fewer pages written per
 * commit than with random ids.
 */
export function newRequestId(): string {
  return uuidV7();
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
