import dns from "node:dns/promises";
import net from "node:net";
import { GatewayError } from "../core/errors.js";
import { type AddressPolicy, addressAllowed } from "../net/address-policy.js";

/**
 * Refuses a webhook URL the gateway must not call: not http(s), credentials in it, or a host
 * that is or resolves to a loopback, private, link-local or metadata address (unless the policy
 * allows private addresses). Deliveries check the resolved address again when they connect.
 */
export async function assertWebhookTarget(raw: string, policy: AddressPolicy, field: string): Promise<string> {
  // `field` names it in the message (`body.callback_url`); the param is the field itself.
  const param = field.replace(/^body\./, "");
  const refuse = (why: string) => new GatewayError("GW_ERR_VALIDATION", `${field} ${why}`, { param });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("must use http or https");
  if (url.username || url.password) throw refuse("must not carry credentials");
  if (raw.length > 2000) throw refuse("must be at most 2000 characters");
  const allowed = addressAllowed(policy);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = net.isIP(host)
    ? [host]
    : await dns.lookup(host, { all: true }).then(
        (list) => list.map((a) => a.address),
        () => {
          throw refuse(`has a host that does not resolve (${host})`);
        },
      );
  const blocked = addresses.find((a) => !allowed(a));
  if (blocked !== undefined) throw refuse(`points to ${blocked}, a private, loopback or reserved address`);
  return url.toString();
}
