import type { FastifyBaseLogger } from "fastify";
import type { TaskSurfaceDeps } from "../api/tasks/index.js";
import type { BlobStore } from "../blobs/blob-store.js";
import type { Config } from "../config/load.js";
import { newTaskId, randomBase62, taskIdOfRun } from "../core/ids.js";
import type { TaskSubmitDeps } from "../core/tasks/ports.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { IdempotencyKeys } from "../idempotency/idempotency-keys.js";
import { countUpstreamCall } from "../metrics/index.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import type { ChannelHealth } from "../routing/channel-health.js";
import type { ChannelSlots } from "../routing/channel-slots.js";
import type { KeyPools } from "../routing/key-pools.js";
import type { Channels } from "../store/channels.js";
import type { PriceBook } from "../store/prices.js";
import { assertWebhookTarget } from "../webhooks/target.js";
import { uploadIntakePort } from "./upload-ports.js";

/** The parts of the gateway a task submit uses. */
export interface TaskSubmitParts {
  config: Pick<Config, "quotaPerUnit" | "tasks" | "limits" | "webhooks" | "bodies" | "uploads">;
  channels: Channels;
  /** The channel types and their task adapters. */
  vendors: Pick<VendorRegistry, "of" | "doing">;
  prices: PriceBook;
  health: ChannelHealth;
  /** Gives each picked channel a key of its pool; without it, channels keep their own key. */
  keyPools?: Pick<KeyPools, "keyed" | "report">;
  slots: ChannelSlots;
  metrics: GatewayMetrics;
  logger: FastifyBaseLogger;
  idempotency: IdempotencyKeys;
  /** Stored copies of task results. */
  taskFiles: BlobStore;
  /** Absolute base URL for links the gateway hands out (the upstream's callback address). */
  publicBaseUrl(): string;
}

/** The submit use case's ports, over the store, the channel list, the prices and the task adapters. */
export function taskSubmitPorts(parts: TaskSubmitParts, store: TaskSubmitDeps["store"]): TaskSubmitDeps {
  const { config } = parts;
  return {
    store,
    upstreams: (type) => parts.vendors.of(type)?.tasks,
    slots: parts.slots,
    channels: {
      candidates: async (model, group, kind) => {
        const found = await parts.channels.candidates(model, group, parts.vendors.doing(kind));
        return parts.keyPools ? parts.keyPools.keyed(found) : found;
      },
      report(channel, error, userId) {
        countUpstreamCall(parts.metrics, channel, error);
        if (parts.keyPools?.report(channel, error)) return;
        void parts.health.report(channel, error, `user:${userId}`);
      },
    },
    prices: {
      taskPrice: (family, action) => parts.prices.taskPrice(family, action),
      groupRatio: (group) => parts.prices.groupRatio(group),
    },
    intake: uploadIntakePort(config, parts.taskFiles, () => parts.publicBaseUrl()),
    checkCallbackUrl: (url, field) =>
      assertWebhookTarget(url, { allowPrivate: config.webhooks.allowPrivateUrls }, field),
    upstreamCallbackUrl: (family, secret) => `${parts.publicBaseUrl()}/${family}/callback/${secret}`,
    ids: { newTaskId, taskIdOfRun, secret: () => randomBase62(32) },
    now: () => Date.now(),
    settings: {
      quotaPerUnit: config.quotaPerUnit,
      unsentGraceMs: config.tasks.unsentGraceMs,
      pollIntervalMs: config.tasks.pollIntervalMs,
      timeoutSeconds: config.tasks.timeoutSeconds,
      leaseMs: config.tasks.leaseMs,
      tasksInFlightPerUser: config.limits.tasksInFlightPerUser,
    },
    onRateLimited: () => parts.metrics.rateLimited.inc({ surface: "tasks" }),
    log: parts.logger,
  };
}

/** The task surface's dependencies: the submit ports, the store's reads and the HTTP settings. */
export function taskSurfacePorts(
  parts: TaskSubmitParts,
  store: TaskSubmitDeps["store"] & TaskSurfaceDeps["store"],
  authenticate: TaskSurfaceDeps["authenticate"],
): TaskSurfaceDeps {
  return {
    submit: taskSubmitPorts(parts, store),
    store,
    idempotency: parts.idempotency,
    authenticate,
    bodies: parts.config.bodies.tasks,
    enabledActions: parts.config.tasks.enabledActions,
    maxBatchFetchIds: parts.config.tasks.maxBatchFetchIds,
    files: parts.taskFiles,
    log: parts.logger,
  };
}
