import { createHmac, timingSafeEqual } from "node:crypto";

/** The console's session cookie. */
export const SESSION_COOKIE = "mg_session";

/** `value.signature`, the signature an HMAC-SHA256 of the value under the secret (base64url). */
export function signValue(value: string, secret: Buffer): string {
  return `${value}.${createHmac("sha256", secret).update(value).digest("base64url")}`;
}

/** The value of a signed text, or null when its signature is not the secret's. */
export function unsignValue(signed: string, secret: Buffer): string | null {
  const dot = signed.lastIndexOf(".");
  if (dot <= 0) return null;
  const value = signed.slice(0, dot);
  const given = Buffer.from(signed.slice(dot + 1));
  const expected = Buffer.from(createHmac("sha256", secret).update(value).digest("base64url"));
  return given.length === expected.length && timingSafeEqual(given, expected) ? value : null;
}

/** One cookie of a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return null;
    }
  }
  return null;
}

/** The Set-Cookie value of the session cookie; `maxAgeSeconds` 0 deletes it. */
export function sessionCookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  const parts = [
    `${SESSION_COOKIE}=${encodeURIComponent(value)}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${options.maxAgeSeconds}`,
  ];
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}
