import type { FastifyBaseLogger } from "fastify";
import type { BackgroundService } from "../background-service.js";
import type { BlobStore } from "../blobs/blob-store.js";
import { ResultCopier } from "../blobs/result-copier.js";
import type { Config } from "../config.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";
import type { ChannelSlots } from "../routing/channel-slots.js";
import type { Channels } from "../store/channels.js";
import { Charges } from "../store/charges.js";
import type { Store } from "../store/database.js";
import type { Ledger } from "../store/ledger.js";
import type { TaskStore } from "../store/tasks.js";
import { taskUpstreamOf } from "../upstreams/task-adapters.js";
import { ChargeReaper } from "./charge-reaper.js";
import { TaskPoller } from "./task-poller.js";
import { UnsentSweeper } from "./unsent-sweeper.js";

/** The parts of the gateway the task workers use. */
export interface TaskWorkerParts {
  config: Pick<Config, "tasks" | "charges" | "instanceName">;
  store: Store;
  ledger: Ledger;
  channels: Channels;
  slots: ChannelSlots;
  metrics: GatewayMetrics;
  logger: FastifyBaseLogger;
  /** Lease owner name of this instance. */
  instanceId: string;
  /** Where copies of task results are stored. */
  taskFiles: BlobStore;
  /** Absolute base URL for links the gateway hands out (the stored results' URLs). */
  publicBaseUrl(): string;
  addService(service: BackgroundService): void;
}

/**
 * Registers the task poller and sweeper and the charge reaper as background services of the
 * gateway; returns the reaper (every role runs its start-up recovery).
 */
export function registerTaskServices(parts: TaskWorkerParts, tasks: TaskStore): ChargeReaper {
  const { config, metrics, logger } = parts;
  const trusted = new GuardedFetcher({ allowPrivate: true });
  const guarded = new GuardedFetcher({ allowPrivate: false });
  const results = new ResultCopier({
    blobs: parts.taskFiles,
    trusted,
    guarded,
    publicBaseUrl: () => parts.publicBaseUrl(),
    maxBytes: config.tasks.resultMaxBytes,
    timeoutMs: config.tasks.resultCopyTimeoutMs,
  });
  parts.addService(
    new TaskPoller({
      store: tasks,
      channels: parts.channels,
      upstreams: taskUpstreamOf,
      slots: parts.slots,
      results,
      closeResults: async () => {
        await Promise.all([trusted.close(), guarded.close()]);
      },
      settings: config.tasks,
      instanceId: parts.instanceId,
      log: logger,
      observe: {
        pollLag: (platform, seconds) => metrics.pollLag.observe({ platform }, seconds),
        pollBatch: (platform, size) => metrics.pollBatchSize.observe({ platform }, size),
      },
    }),
  );
  parts.addService(new UnsentSweeper(tasks, config.tasks, logger));
  const reaper = new ChargeReaper(
    new Charges(parts.store.db, parts.store.dialect),
    parts.ledger,
    tasks,
    {
      intervalMs: config.charges.reapIntervalMs,
      leaseMs: Math.max(1000, config.charges.reapIntervalMs * 4),
      instance: config.instanceName,
    },
    logger,
  );
  parts.addService(reaper);
  return reaper;
}
