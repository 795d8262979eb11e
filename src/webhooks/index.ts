import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config/load.js";
import { renderTaskRecord } from "../core/tasks/record.js";
import { renderVideo } from "../core/videos/video-object.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";
import type { Store } from "../store/database.js";
import { TaskReads } from "../store/task-reads.js";
import { WebhookDeliveries } from "../store/webhook-deliveries.js";
import { WebhookDispatcher } from "./dispatcher.js";

/** How long a dispatcher owns the deliveries it claimed: well past one attempt's timeout. */
const LEASE_EXTRA_MS = 30_000;

/** What the webhook dispatcher is built from. */
export interface WebhookDeps {
  config: Pick<Config, "webhooks" | "videos">;
  store: Pick<Store, "db" | "dialect">;
  /** Unique name of this process: the owner of the deliveries it claims. */
  instanceId: string;
  logger: FastifyBaseLogger;
  addService(service: BackgroundService): void;
}

/**
 * Registers the webhook dispatcher as a background service. Receivers are called through the
 * SSRF guard (private addresses only when `webhooks.allowPrivateUrls` is set), and the body is
 * the task record exactly as its owner's fetch shows it (a video's: its video object).
 */
export function registerWebhookServices(deps: WebhookDeps): WebhookDispatcher {
  const tasks = new TaskReads(deps.store.db);
  const { webhooks } = deps.config;
  const dispatcher = new WebhookDispatcher({
    deliveries: new WebhookDeliveries(deps.store.db, deps.store.dialect === "postgres"),
    instanceId: deps.instanceId,
    logger: deps.logger,
    fetcher: new GuardedFetcher({ allowPrivate: webhooks.allowPrivateUrls }),
    settings: {
      tickMs: webhooks.tickMs,
      retryBaseMs: webhooks.retryBaseMs,
      maxAgeSeconds: webhooks.maxAgeSeconds,
      timeoutMs: webhooks.timeoutMs,
      leaseMs: webhooks.timeoutMs + LEASE_EXTRA_MS,
    },
    renderTask: async (taskId, userId) => {
      const row = await tasks.findOwned(userId, taskId);
      if (!row) return null;
      // A video's webhook carries the video object, as its retrieve shows it.
      return row.platform === "video" ? renderVideo(row, deps.config.videos.retentionSeconds) : renderTaskRecord(row);
    },
  });
  deps.addService(dispatcher);
  return dispatcher;
}
