import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { OperatorLists } from "../api/admin/admin-deps.js";
import { adminKeyHashSource } from "../auth/admin-key.js";
import type { Authenticator } from "../auth/authenticator.js";
import type { BlobStore } from "../blobs/blob-store.js";
import { openBlobStore } from "../blobs/open-blob-store.js";
import type { Config } from "../config/load.js";
import type { ConsoleServices } from "../console/server/console-services.js";
import type { AdminPorts } from "../core/admin/ports.js";
import type { RedemptionPorts } from "../core/redemptions/ports.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { ChangeBus, ChangeTopic } from "../events/change-bus.js";
import { DEFAULT_IDEMPOTENCY, IdempotencyKeys } from "../idempotency/idempotency-keys.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import { OperatorCallLimits } from "../limits/call-limits.js";
import { MinuteCounters } from "../limits/limiter.js";
import { RateLimits } from "../limits/rate-limits.js";
import { RedemptionLimits } from "../limits/redemption-limits.js";
import { type GatewayMetrics, quotaObserver } from "../metrics/index.js";
import { ChannelHealth } from "../routing/channel-health.js";
import { ChannelSlots } from "../routing/channel-slots.js";
import { KeyPools } from "../routing/key-pools.js";
import type { Channels } from "../store/channels.js";
import type { Store } from "../store/database.js";
import { IdempotencyKeyRows } from "../store/idempotency-keys.js";
import { Ledger } from "../store/ledger.js";
import { operatorListsOf } from "../store/operator-lists.js";
import type { PriceBook } from "../store/prices.js";
import type { RateLimitRules } from "../store/rate-limits.js";
import { RedemptionCodes } from "../store/redemptions.js";
import { RequestLogWriter, requestLogInsert } from "../store/request-logs.js";
import { Settings } from "../store/settings.js";
import type { Tokens } from "../store/tokens.js";
import { UserImages } from "../store/user-images.js";
import type { Users } from "../store/users.js";
import { vendors } from "../upstreams/registry.js";
import { adminPorts } from "../wiring/admin-ports.js";
import { buildConsoleServices } from "../wiring/console-services.js";

/**
 * The gateway's services, built once per gateway. Each surface takes the part it uses (the deps
 * interface declared beside it); this whole set exists only here, in the wiring, and on the
 * Gateway object for tests and the command line.
 */
export interface GatewayServices {
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
  metrics: GatewayMetrics;
  /** The channel types: what each serves, its adapters and its probe (upstreams/registry.ts). */
  vendors: VendorRegistry;
  /** Per-token request limits and failed-authentication limits (shared through Redis when set). */
  limits: RateLimits;
  /** The operators' rate limits (table `rate_limits`, cached) and the counters of metered calls. */
  rateLimitRules: RateLimitRules;
  callLimits: OperatorCallLimits;
  /** Channel outcomes and automatic disabling. */
  health: ChannelHealth;
  /** The rotation over the channels' key pools and the keys' outcomes. */
  keyPools: KeyPools;
  /** Per-channel concurrency limits. */
  slots: ChannelSlots;
  /** Remembered answers of creating requests sent with an `Idempotency-Key` header. */
  idempotency: IdempotencyKeys;
  /** Batched, off-the-hot-path request log (one row per relayed call). */
  requestLogs: RequestLogWriter;
  /** The task and webhook-delivery lists of the admin API. */
  operatorLists: OperatorLists;
  /** The admin key's hash as it stands now (re-read from the store, see `auth/admin-key.ts`). */
  adminKeyHash(): Promise<string>;
  /** Unique name of this process, used as lease owner by workers. */
  instanceId: string;
  /** Absolute base URL for links the gateway hands out (PUBLIC_BASE_URL or the listen address). */
  publicBaseUrl(): string;
  /** Stored copies of task results (and other task files), served under each family's `/files`. */
  taskFiles: BlobStore;
  /** Generated images, served under `/v1/images/files`. */
  imageFiles: BlobStore;
  /** Stored copies of completed videos (video, thumbnail, spritesheet), served by the videos' content route. */
  videoFiles: BlobStore;
  /** Announces a change of operator data: local caches and other instances drop it. */
  announce(topic: ChangeTopic): Promise<void>;
  /** The ports of the operator's use cases (core/admin/) over this gateway's stores. */
  admin: AdminPorts;
  /** The images each user was given as stored URLs (the console lists them). */
  userImages: UserImages;
  /** The console's accounts, sessions and reads. */
  console: ConsoleServices;
  /** A user's redemption of a code (API token or console), with its failed-attempt limit. */
  redemptions: RedemptionPorts;
  /** Aborted when a stop's drain window is over: what still runs (streams) ends now. */
  stopping: AbortSignal;
  /** Aborted when a stop begins: /readyz answers 503 from then on, while requests are still served. */
  shuttingDown: AbortSignal;
  /** Registers a background service; it starts with the gateway when its role runs workers. */
  addService(service: BackgroundService): void;
}

/** What the services are built from: the store and caches opened at start. */
export interface ServiceParts
  extends Pick<
    GatewayServices,
    | "config"
    | "store"
    | "logger"
    | "metrics"
    | "users"
    | "tokens"
    | "channels"
    | "prices"
    | "rateLimitRules"
    | "auth"
    | "bus"
    | "stopping"
    | "shuttingDown"
    | "addService"
  > {
  /** The Redis client shared limits use, when Redis is set. */
  redis: ConstructorParameters<typeof RateLimits>[1];
  /** The admin key's hash as resolved at start. */
  adminKeyHash: string;
  /** Drops this instance's caches of a topic (the bus does it for other instances). */
  dropCaches(topic: ChangeTopic): void;
  listenUrl(): string;
}

/** Builds the gateway's services from the parts opened at start. */
export function buildServices(parts: ServiceParts): GatewayServices {
  const { config, store, logger, metrics, channels, bus } = parts;
  const instanceId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const announce = async (topic: ChangeTopic) => {
    parts.dropCaches(topic);
    await bus.publish(topic);
  };
  const ledger = Ledger.forStore(store, quotaObserver(metrics), {
    instance: config.instanceName,
    openMs: config.charges.openMs,
  });
  const redemptionCodes = new RedemptionCodes(store.db, ledger);
  return {
    config,
    store,
    logger,
    ledger,
    users: parts.users,
    tokens: parts.tokens,
    channels,
    prices: parts.prices,
    auth: parts.auth,
    bus,
    metrics,
    vendors,
    limits: new RateLimits(
      {
        requestsPerMinute: config.limits.requestsPerMinute,
        authFailuresPerMinute: config.limits.authFailuresPerMinute,
        keyPrefix: config.redisKeyPrefix,
      },
      parts.redis,
    ),
    rateLimitRules: parts.rateLimitRules,
    callLimits: new OperatorCallLimits(
      () => parts.rateLimitRules.rules(),
      new MinuteCounters(parts.redis, config.redisKeyPrefix),
      logger,
    ),
    health: new ChannelHealth(
      channels,
      () => announce("channels"),
      {
        afterFailures: config.routing.disableAfterFailures,
        minUsers: config.routing.disableMinUsers,
        windowMs: config.routing.failureWindowMs,
      },
      logger,
    ),
    keyPools: new KeyPools(channels.keys, channels, metrics, () => announce("channels"), logger),
    slots: new ChannelSlots(config.routing.slotWaitMs),
    idempotency: new IdempotencyKeys(new IdempotencyKeyRows(store.db), {
      ...DEFAULT_IDEMPOTENCY,
      leaseMs: config.idempotency.leaseMs,
      waitMs: config.idempotency.waitMs,
      owner: instanceId,
    }),
    requestLogs: new RequestLogWriter(requestLogInsert(store), (err) =>
      logger.warn({ err }, "a request log row was dropped"),
    ),
    operatorLists: operatorListsOf(store.db),
    adminKeyHash: adminKeyHashSource(new Settings(store.db), config.adminKey, parts.adminKeyHash),
    instanceId,
    publicBaseUrl: () => (config.publicBaseUrl ?? parts.listenUrl()).replace(/\/+$/, ""),
    taskFiles: openBlobStore(config, "tasks"),
    imageFiles: openBlobStore(config, "images"),
    videoFiles: openBlobStore(config, "videos"),
    announce,
    admin: adminPorts({ ...parts, ledger, vendors, announce, redemptions: redemptionCodes }),
    userImages: new UserImages(store.db, store),
    console: buildConsoleServices({ config, store, users: parts.users, redis: parts.redis }),
    redemptions: {
      ledger: redemptionCodes,
      attempts: new RedemptionLimits({ keyPrefix: config.redisKeyPrefix }, parts.redis),
      quotaPerUnit: config.quotaPerUnit,
      now: () => Math.floor(Date.now() / 1000),
    },
    stopping: parts.stopping,
    shuttingDown: parts.shuttingDown,
    addService: parts.addService,
  };
}
