import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../contracts/console.js";

const KEY_LENGTH = 32;
const R = 8;
const P = 1;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** scrypt needs 128 * N * r bytes; node's default ceiling (32 MiB) is just too low for N = 2^15. */
const maxmemFor = (n: number, r: number) => 256 * n * r;

/**
 * Hashes a password with scrypt (N = 2^cost, r = 8, p = 1, a random 16-byte salt). The stored text
 * carries its parameters, `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url), so a later change
 * of cost still verifies older hashes.
 */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** cost;
  const key = await derive(password, salt, { N: n, r: R, p: P, maxmem: maxmemFor(n, R) });
  return ["scrypt", cost, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Whether a password matches a stored hash; compared in constant time. False for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, cost, r, p, salt, hash] = stored.split("$");
  if (kind !== "scrypt" || !cost || !r || !p || salt === undefined || hash === undefined) return false;
  const n = 2 ** Number(cost);
  const expected = Buffer.from(hash, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), {
    N: n,
    r: Number(r),
    p: Number(p),
    maxmem: maxmemFor(n, Number(r)),
  });
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/** What is wrong with a new password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/**
 * A hash of a random password at the configured cost: a sign-in for an unknown name is checked
 * against it, so it spends the same work as one for a known name and its timing tells nothing.
 */
export function decoyHash(cost: number): () => Promise<string> {
  let decoy: Promise<string> | null = null;
  return () => {
    decoy ??= hashPassword(randomBytes(24).toString("base64url"), cost);
    return decoy;
  };
}
