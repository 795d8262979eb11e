/** Channels: the upstream accounts operators configure, as every layer sees them. */
import type { ChannelSettings } from "./channel-settings.js";
import type { KeyRotation } from "./key-pool.js";

export type { ChannelSettings };

/**
 * A channel's type: which vendor's protocol its upstream speaks. The types are those of the
 * vendor registry (upstreams/registry.ts), the only list of them.
 */
export type ChannelType = string;

/** A channel as the rest of the gateway sees it (JSON columns parsed). Holds the secret key. */
export interface Channel {
  id: number;
  name: string;
  type: ChannelType;
  baseUrl: string;
  /**
   * The key a call uses: on a channel picked for a call, the pool key the rotation chose
   * (`keyId` names it); on a channel read from the store, the pool's first key.
   */
  key: string;
  /** The pool key `key` is, when the channel was picked for a call. */
  keyId?: number;
  keyRotation: KeyRotation;
  tags: string[];
  models: string[];
  modelMapping: Record<string, string>;
  groups: string[];
  priority: number;
  weight: number;
  priceRatio: number;
  status: string;
  statusReason: string;
  settings: ChannelSettings;
  failureCount: number;
  lastError: string | null;
  lastErrorAt: number | null;
  lastSuccessAt: number | null;
  successCount: number;
  requestCount: number;
  /** Moving average of recent outcomes: 1 when every recent call succeeded. */
  recentSuccessRate: number;
  createdAt: number;
  updatedAt: number;
}

export interface ChannelInput {
  name: string;
  type: ChannelType;
  baseUrl: string;
  key: string;
  /** More keys for the pool, after `key`. */
  keys?: string[];
  keyRotation?: KeyRotation;
  tags?: string[];
  models: string[];
  modelMapping?: Record<string, string>;
  groups?: string[];
  priority?: number;
  weight?: number;
  priceRatio?: number;
  status?: string;
  settings?: ChannelSettings;
}
