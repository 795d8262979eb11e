import type { Channel, ChannelInput } from "../channel.js";
import type { DefaultPrice } from "../default-prices.js";
import type { PoolKey } from "../key-pool.js";
import type { LimitScope, RateLimitRule } from "../limits/rate-limit-rules.js";
import type { RedemptionBatchStore } from "../redemptions/ports.js";
import type { VendorRegistry } from "../vendor-registry.js";
import type { LedgerEntryView, PriceKind, PriceView, TokenView, UserView } from "./shapes.js";

export type { PriceKind };

/**
 * What the operator's use cases work on, declared here and built by the wiring: the gateway's
 * own stores (whose caches a change drops at once, on every instance when Redis is set) for the
 * admin API and the console, fresh ones over the same store for the command line (running
 * gateways see its changes when their caches expire).
 */

/** A user as stored (the webhook secret included: only the user's own pages show it). */
export type UserRecord = Omit<UserView, "status"> & { status: string; webhook_secret: string | null };

/** A token as stored (its key's hash aside); its lists as JSON text. */
export type TokenRecord = Omit<TokenView, "status" | "models" | "ip_allow"> & {
  status: string;
  models: string | null;
  ip_allow: string | null;
};

export type PriceRecord = Omit<PriceView, "kind" | "unit"> & { kind: string; unit: string };

/** A ledger row: the fields its view shows, the reference as stored. */
export type LedgerRecord = LedgerEntryView;

/** A token's fields as the store takes them (lists as lists; `null` removes a limit). */
type Limit = number | null;
type Names = string[] | null;
export interface TokenFields {
  name?: string;
  status?: string;
  expiresAt?: Limit;
  quotaLimit?: Limit;
  models?: Names;
  ipAllow?: Names;
}

/** What changed, for the caches of every instance to drop. */
export type AdminTopic = "users" | "tokens" | "channels" | "prices" | "limits";

export interface AdminPorts {
  users: {
    get(id: number): Promise<UserRecord | undefined>;
    list(options: { limit: number; afterId?: number }): Promise<UserRecord[]>;
    create(input: { name: string; group?: string; creditLine?: number }): Promise<UserRecord>;
    update(
      id: number,
      patch: Partial<Pick<UserRecord, "name" | "group" | "status" | "webhook_url" | "webhook_secret" | "credit_line">>,
    ): Promise<UserRecord | undefined>;
  };
  tokens: {
    get(id: number): Promise<TokenRecord | undefined>;
    listByUser(userId: number): Promise<TokenRecord[]>;
    create(input: TokenFields & { userId: number; name: string }): Promise<{ row: TokenRecord; key: string }>;
    update(id: number, patch: TokenFields): Promise<TokenRecord | undefined>;
    /** Revokes every token of the user not revoked yet. */
    revokeAllOfUser(userId: number): Promise<unknown>;
  };
  channels: {
    list(): Promise<Channel[]>;
    get(id: number): Promise<Channel | undefined>;
    create(input: ChannelInput): Promise<Channel>;
    update(id: number, patch: Partial<ChannelInput> & { statusReason?: string }): Promise<Channel | undefined>;
    /** Refused (`deleted: false`) while unfinished tasks are bound to the channel; undefined when unknown. */
    remove(id: number): Promise<{ deleted: true } | { deleted: false; unfinishedTasks: number } | undefined>;
    /** The channels' key pools. */
    keys: {
      listFor(channelId: number): Promise<PoolKey[]>;
      add(channelId: number, keys: readonly string[]): Promise<{ added: PoolKey[]; duplicates: number }>;
      setEnabled(channelId: number, keyId: number, enabled: boolean): Promise<PoolKey | undefined>;
      remove(channelId: number, keyId: number): Promise<boolean>;
    };
  };
  /** The channel types (the vendor registry): listed, and each channel tested by its type's probe. */
  vendors: Pick<VendorRegistry, "adapters" | "capabilitiesOf" | "platformsOf">;
  prices: {
    listPrices(): Promise<PriceRecord[]>;
    getPrice(kind: PriceKind, name: string): Promise<PriceRecord | undefined>;
    setPrice(price: DefaultPrice): Promise<void>;
    deletePrice(kind: PriceKind, name: string): Promise<boolean>;
    listGroupRatios(): Promise<{ group: string; ratio: number }[]>;
    setGroupRatio(group: string, ratio: number): Promise<void>;
  };
  /** The operators' rate limits (migration 017's table). */
  rateLimits: {
    list(): Promise<RateLimitRule[]>;
    set(rule: RateLimitRule): Promise<void>;
    remove(scope: LimitScope, subject: string, group: string): Promise<boolean>;
  };
  ledger: {
    /** Applies a top-up once per (user, reference): a repeat applies nothing. */
    topUp(userId: number, amount: number, reference: string, note: string): Promise<{ applied: boolean }>;
    entries(userId: number, options: { limit: number; beforeId?: number }): Promise<LedgerRecord[]>;
  };
  /** Batches of redemption codes and their codes. */
  redemptions: RedemptionBatchStore;
  /** Quota per currency unit (QUOTA_PER_UNIT): amounts in currency are converted with it. */
  quotaPerUnit: number;
  /** Tells the caches of this instance and the others that a topic changed. */
  announce(topic: AdminTopic): Promise<void>;
  /** The webhook URL as it will be called, or a 400 naming `field` when its address is not allowed. */
  checkWebhookTarget(url: string, field: string): Promise<string>;
  /** The first entry of an IP allow-list that is not an IP or CIDR, or null. */
  invalidIpEntry(entries: string[]): string | null;
  newWebhookSecret(): string;
  /** A top-up reference for a top-up sent without one. */
  newTopUpReference(): string;
}
