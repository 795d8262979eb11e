import { hash } from "node:crypto";
import net from "node:net";
import { GatewayError } from "../core/errors.js";
import { unixNow } from "../core/ids.js";
import type { TokenRow, Tokens } from "../store/tokens.js";
import type { UserRow, Users } from "../store/users.js";

/** Who is calling: the token and its owner, as a request sees them. */
export interface Principal {
  userId: number;
  userName: string;
  group: string;
  tokenId: number;
  tokenName: string;
  /** Models (or task families) the token may use; null = any. */
  models: string[] | null;
}

interface CacheEntry {
  token: TokenRow;
  user: UserRow;
  allow: net.BlockList | null;
  loadedAt: number;
}

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 50_000;

function blockListFor(ipAllow: string[] | null): net.BlockList | null {
  if (!ipAllow || ipAllow.length === 0) return null;
  const list = new net.BlockList();
  for (const entry of ipAllow) {
    const [addr, bits] = entry.split("/");
    const family = net.isIPv6(addr ?? "") ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(addr ?? "", family);
    else list.addSubnet(addr ?? "", Number(bits), family);
  }
  return list;
}

/**
 * The cache key of a presented key: its SHA-256, so that the cache never holds a key itself. The
 * one-shot `crypto.hash` (a third of `createHash(...).update(...).digest()`'s cost) runs on every
 * request.
 */
function cacheKeyOf(key: string): string {
  return hash("sha256", key, "hex");
}

/** Unwraps IPv4 addresses that reach an IPv6 socket as `::ffff:a.b.c.d`. */
function normalizeIp(ip: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return { address: mapped[1], family: "ipv4" };
  return { address: ip, family: net.isIPv6(ip) ? "ipv6" : "ipv4" };
}

/**
 * Turns a presented key into a Principal, or a GatewayError saying why not. Lookups are cached
 * by key hash; `invalidate()` drops the cache when tokens or users change.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly tokens: Tokens,
    private readonly users: Users,
  ) {}

  invalidate(): void {
    this.cache.clear();
  }

  private async load(hash: string, key: string): Promise<CacheEntry | null> {
    const hit = this.cache.get(hash);
    if (hit && Date.now() - hit.loadedAt < CACHE_TTL_MS) return hit;
    const token = await this.tokens.findByKey(key);
    if (!token) return null;
    const user = await this.users.get(Number(token.user_id));
    if (!user) return null;
    const entry: CacheEntry = {
      token,
      user,
      allow: blockListFor(token.ip_allow ? JSON.parse(token.ip_allow) : null),
      loadedAt: Date.now(),
    };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, entry);
    return entry;
  }

  async authenticate(key: string | null, ip: string): Promise<Principal> {
    if (!key) throw new GatewayError("GW_ERR_UNAUTHENTICATED");
    const entry = await this.load(cacheKeyOf(key), key);
    if (!entry) throw new GatewayError("GW_ERR_UNAUTHENTICATED", "Invalid API key.");
    const { token, user } = entry;
    if (token.status !== "enabled") throw new GatewayError("GW_ERR_TOKEN_DISABLED");
    if (token.expires_at !== null && Number(token.expires_at) <= unixNow()) {
      throw new GatewayError("GW_ERR_TOKEN_EXPIRED");
    }
    if (user.status !== "enabled") throw new GatewayError("GW_ERR_USER_DISABLED");
    if (entry.allow) {
      const { address, family } = normalizeIp(ip);
      if (!net.isIP(address) || !entry.allow.check(address, family)) {
        throw new GatewayError("GW_ERR_IP_NOT_ALLOWED", `The token may not be used from ${address}.`);
      }
    }
    return {
      userId: Number(user.id),
      userName: user.name,
      group: user.group,
      tokenId: Number(token.id),
      tokenName: token.name,
      models: token.models ? JSON.parse(token.models) : null,
    };
  }
}

/** Refuses a model (or task family) the token is not allowed to use. */
export function assertModelAllowed(principal: Principal, model: string): void {
  if (principal.models !== null && !principal.models.includes(model)) {
    throw new GatewayError("GW_ERR_MODEL_NOT_ALLOWED", `The token may not use model "${model}".`);
  }
}

/** Validates CIDR/IP allowlist entries; returns the first bad entry or null. */
export function invalidIpEntry(entries: string[]): string | null {
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split("/");
    if (extra !== undefined || !addr || !net.isIP(addr)) return entry;
    if (bits !== undefined) {
      const max = net.isIPv6(addr) ? 128 : 32;
      if (!/^\d+$/.test(bits) || Number(bits) > max) return entry;
    }
  }
  return null;
}
