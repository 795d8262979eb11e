import type { FastifyBaseLogger } from "fastify";
import type { BlobStore } from "../blobs/blob-store.js";
import { ResultCopier } from "../blobs/result-copier.js";
import type { Config } from "../config/load.js";
import type { TaskPollPort, TaskReadPort } from "../core/tasks/ports.js";
import type { ResultCopierPort } from "../core/tasks/result-files.js";
import type { VendorRegistry } from "../core/vendor-registry.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import type { GatewayMetrics } from "../metrics/registry.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";
import type { ChannelSlots } from "../routing/channel-slots.js";
import type { Channels } from "../store/channels.js";
import { Charges } from "../store/charges.js";
import type { Store } from "../store/database.js";
import type { Ledger } from "../store/ledger.js";
import { RetentionRows } from "../store/retention.js";
import { VideoRows } from "../store/videos.js";
import { ChargeReaper } from "./charge-reaper.js";
import { RetentionPruner } from "./retention-pruner.js";
import { TaskPoller } from "./task-poller.js";
import { UnsentSweeper } from "./unsent-sweeper.js";
import { VideoSweeper } from "./video-sweeper.js";

/** The parts of the gateway the task workers use. */
export interface TaskWorkerParts {
  config: Pick<Config, "tasks" | "charges" | "instanceName" | "videos">;
  store: Store;
  ledger: Ledger;
  channels: Channels;
  /** The channel types and their task adapters. */
  vendors: Pick<VendorRegistry, "of">;
  slots: ChannelSlots;
  metrics: GatewayMetrics;
  logger: FastifyBaseLogger;
  /** Lease owner name of this instance. */
  instanceId: string;
  /** Where copies of task results are stored. */
  taskFiles: BlobStore;
  /** Where copies of completed videos are stored. */
  videoFiles: BlobStore;
  /** Absolute base URL for links the gateway hands out (the stored results' URLs). */
  publicBaseUrl(): string;
  addService(service: BackgroundService): void;
}

/**
 * Registers the task poller and sweeper and the charge reaper as background services of the
 * gateway; returns the reaper (every role runs its start-up recovery).
 */
export function registerTaskServices(
  parts: TaskWorkerParts,
  tasks: TaskPollPort & Pick<TaskReadPort, "findOwned">,
): ChargeReaper {
  const { config, metrics, logger } = parts;
  const trusted = new GuardedFetcher({ allowPrivate: true });
  const guarded = new GuardedFetcher({ allowPrivate: false });
  const copierInto = (blobs: BlobStore) =>
    new ResultCopier({
      blobs,
      trusted,
      guarded,
      publicBaseUrl: () => parts.publicBaseUrl(),
      maxBytes: config.tasks.resultMaxBytes,
      timeoutMs: config.tasks.resultCopyTimeoutMs,
    });
  const taskCopier = copierInto(parts.taskFiles);
  const videoCopier = copierInto(parts.videoFiles);
  // Videos are kept in their own store (their retention and deletion differ from audio results).
  const results: ResultCopierPort = {
    isStored: (url) => taskCopier.isStored(url),
    copy: (file, channel) => (file.family === "video" ? videoCopier : taskCopier).copy(file, channel),
    async discard(url) {
      // A copy's URL is <base>/<family>/files/<key>.
      const [family, , key] = new URL(url).pathname.split("/").slice(-3);
      if (key) await (family === "video" ? parts.videoFiles : parts.taskFiles).delete(key);
    },
  };
  parts.addService(
    new TaskPoller({
      store: tasks,
      channels: parts.channels,
      upstreams: (type) => parts.vendors.of(type)?.tasks,
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
  parts.addService(
    new VideoSweeper(
      new VideoRows(parts.store.db),
      parts.videoFiles,
      { retentionSeconds: config.videos.retentionSeconds, sweepIntervalMs: config.videos.sweepIntervalMs },
      logger,
    ),
  );
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

/** Registers the pruner of rows past their retention (docs/operations.md, "Retention"). */
export function registerRetentionPruner(
  parts: Pick<TaskWorkerParts, "store" | "logger" | "addService"> & { config: Pick<Config, "retention"> },
): RetentionPruner {
  const { retention } = parts.config;
  const pruner = new RetentionPruner(
    new RetentionRows(parts.store.db, parts.store.dialect),
    {
      days: {
        request_logs: retention.requestLogDays,
        task_events: retention.taskEventDays,
        webhook_deliveries: retention.webhookDeliveryDays,
      },
      intervalMs: retention.intervalMs,
      batchRows: retention.batchRows,
      batchPauseMs: retention.batchPauseMs,
    },
    parts.logger,
  );
  parts.addService(pruner);
  return pruner;
}
