import { GatewayError } from "../core/errors.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { ChangeTopic } from "../events/change-bus.js";
import type { Channels } from "../store/channels.js";
import type { Ledger } from "../store/ledger.js";
import type { PriceBook } from "../store/prices.js";
import type { Tokens } from "../store/tokens.js";
import type { Users } from "../store/users.js";

/**
 * What the admin operations work on. The HTTP surface passes the gateway's own (whose caches a
 * change drops at once, on every instance when Redis is set); the command line passes fresh ones
 * over the same store, and running gateways see its changes when their caches expire.
 */
export interface AdminStores {
  users: Users;
  tokens: Tokens;
  channels: Channels;
  prices: PriceBook;
  ledger: Ledger;
  /** The channel types (the vendor registry): listed, and each channel tested by its type's probe. */
  vendors: VendorRegistry;
  /** Whether a webhook URL may point at a private or loopback address. */
  allowPrivateWebhooks: boolean;
  announce(topic: ChangeTopic): Promise<void>;
}

/** The 404 of a resource that does not exist. */
export function notFound(what: string, id: string | number): GatewayError {
  return new GatewayError("GW_ERR_NOT_FOUND", `No ${what} ${id}.`);
}

/**
 * A body sent back from a GET may carry the resource's identity; it must be the one in the path,
 * so that a body meant for one resource never changes another.
 */
export function assertSameIdentity(body: Record<string, unknown>, identity: Record<string, string | number>): void {
  for (const [field, expected] of Object.entries(identity)) {
    const sent = body[field];
    if (sent !== undefined && String(sent) !== String(expected)) {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `body.${field} is ${JSON.stringify(sent)} but the path names ${JSON.stringify(String(expected))}`,
        { param: field },
      );
    }
  }
}
