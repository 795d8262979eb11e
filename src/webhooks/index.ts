import type { GatewayContext } from "../context.js";
import { renderTaskRecord } from "../core/tasks/record.js";
import { GuardedFetcher } from "../net/guarded-fetch.js";
import { TaskStore } from "../store/tasks.js";
import { WebhookDeliveries } from "../store/webhook-deliveries.js";
import { WebhookDispatcher } from "./dispatcher.js";

/** How long a dispatcher owns the deliveries it claimed: well past one attempt's timeout. */
const LEASE_EXTRA_MS = 30_000;

/**
 * Registers the webhook dispatcher as a background service. Receivers are called through the
 * SSRF guard (private addresses only when `webhooks.allowPrivateUrls` is set), and the body is
 * the task record exactly as its owner's fetch shows it.
 */
export function registerWebhookServices(ctx: GatewayContext): WebhookDispatcher {
  const store = new TaskStore(ctx.store.db, ctx.ledger, ctx.store.dialect);
  const { webhooks } = ctx.config;
  const dispatcher = new WebhookDispatcher({
    deliveries: new WebhookDeliveries(ctx.store.db, ctx.store.dialect === "postgres"),
    instanceId: ctx.instanceId,
    logger: ctx.logger,
    fetcher: new GuardedFetcher({ allowPrivate: webhooks.allowPrivateUrls }),
    settings: {
      tickMs: webhooks.tickMs,
      retryBaseMs: webhooks.retryBaseMs,
      maxAgeSeconds: webhooks.maxAgeSeconds,
      timeoutMs: webhooks.timeoutMs,
      leaseMs: webhooks.timeoutMs + LEASE_EXTRA_MS,
    },
    renderTask: async (taskId, userId) => {
      const row = await store.findOwned(userId, taskId);
      return row ? renderTaskRecord(row) : null;
    },
  });
  ctx.addService(dispatcher);
  return dispatcher;
}
