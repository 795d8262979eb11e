import type { FastifyBaseLogger } from "fastify";
import type { Authenticator } from "./auth/authenticator.js";
import type { BackgroundService } from "./background-service.js";
import type { Config } from "./config.js";
import type { ChangeBus, ChangeTopic } from "./events/change-bus.js";
import type { IdempotencyKeys } from "./idempotency/idempotency-keys.js";
import type { RateLimits } from "./limits/rate-limits.js";
import type { GatewayMetrics } from "./metrics/registry.js";
import type { ChannelHealth } from "./routing/channel-health.js";
import type { ChannelSlots } from "./routing/channel-slots.js";
import type { Channels } from "./store/channels.js";
import type { Store } from "./store/database.js";
import type { Ledger } from "./store/ledger.js";
import type { PriceBook } from "./store/prices.js";
import type { RequestLogWriter } from "./store/request-logs.js";
import type { Tokens } from "./store/tokens.js";
import type { Users } from "./store/users.js";

export type { BackgroundService };

/** Everything a surface or a worker needs, wired once in `app.ts`. */
export interface GatewayContext {
  config: Config;
  store: Store;
  logger: FastifyBaseLogger;
  ledger: Ledger;
  users: Users;
  tokens: Tokens;
  channels: Channels;
  prices: PriceBook;
  auth: Authenticator;
  bus: ChangeBus;
  /** This gateway's Prometheus registry and metric objects (see `metrics/registry.ts`). */
  metrics: GatewayMetrics;
  /** Per-token request limits and failed-authentication limits (shared through Redis when set). */
  limits: RateLimits;
  /** Channel outcomes and automatic disabling: pass `report` to `withFailover`. */
  health: ChannelHealth;
  /** Per-channel concurrency limits. */
  slots: ChannelSlots;
  /** Remembered answers of creating requests sent with an `Idempotency-Key` header. */
  idempotency: IdempotencyKeys;
  /** Batched, off-the-hot-path request log (one row per relayed call). */
  requestLogs: RequestLogWriter;
  /** The admin key's hash as it stands now (re-read from the store, see `auth/admin-key.ts`). */
  adminKeyHash(): Promise<string>;
  /** Unique name of this process, used as lease owner by workers. */
  instanceId: string;
  /** Absolute base URL for links the gateway hands out (PUBLIC_BASE_URL or the listen address). */
  publicBaseUrl(): string;
  /** Announces a change of operator data: local caches and other instances drop it. */
  announce(topic: ChangeTopic): Promise<void>;
  /** Aborted when a stop's drain window is over: what still runs (streams) ends now. */
  stopping: AbortSignal;
  /** Registers a background service; it starts with the gateway when its role runs workers. */
  addService(service: BackgroundService): void;
}
