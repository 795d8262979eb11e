import { randomBytes } from "node:crypto";

/** A new per-user signing secret, in the Standard Webhooks form `whsec_<base64 of 32 bytes>`. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
