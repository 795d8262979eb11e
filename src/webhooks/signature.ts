import { createHmac, timingSafeEqual } from "node:crypto";

/** The secrets this module signs with are made where users are created. */
export { newWebhookSecret } from "../core/webhook-secret.js";

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

/**
 * The `webhook-signature` header of the Standard Webhooks convention: `v1,` + base64 of
 * HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}` keyed with the secret's bytes.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** Checks a `webhook-signature` header (which may list several space-separated signatures). */
export function verifyWebhook(secret: string, id: string, timestamp: number, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).slice(3), "base64");
  return header.split(" ").some((part) => {
    const [version, sig] = part.split(",");
    if (version !== "v1" || !sig) return false;
    const given = Buffer.from(sig, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
