import type { FastifyBaseLogger } from "fastify";
import { unixNow } from "../core/ids.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { GuardedFetcher } from "../net/guarded-fetch.js";
import type { WebhookDeliveries, WebhookDelivery } from "../store/webhook-deliveries.js";
import { signWebhook } from "./signature.js";

export interface WebhookSettings {
  /** How often due deliveries are looked for (ms). */
  tickMs: number;
  /** First retry delay; each further retry doubles it, up to an hour (ms). */
  retryBaseMs: number;
  /** A delivery not accepted this long after the task ended is given up (seconds). */
  maxAgeSeconds: number;
  /** Time allowed for the receiver to answer (ms). */
  timeoutMs: number;
  /** How long a worker owns a claimed delivery (ms). */
  leaseMs: number;
}

export interface WebhookDispatcherDeps {
  deliveries: WebhookDeliveries;
  instanceId: string;
  logger: FastifyBaseLogger;
  fetcher: GuardedFetcher;
  settings: WebhookSettings;
  /** The task record exactly as a fetch shows it to its owner, or null when it is gone. */
  renderTask(taskId: string, userId: number): Promise<unknown | null>;
}

const MAX_RETRY_MS = 3_600_000;
const BATCH = 50;

/**
 * Sends queued webhooks: claims due deliveries with a lease (any number of instances), POSTs the
 * signed task record, and retries failures with exponential backoff until the receiver answers
 * 2xx or the delivery is too old. The `webhook-id` stays the same on every attempt, so receivers
 * can drop repeats. Deliveries never block the task poller: they run on their own timer.
 */
export class WebhookDispatcher extends PeriodicService {
  readonly name = "webhook-dispatcher";

  constructor(private readonly deps: WebhookDispatcherDeps) {
    super();
  }

  protected intervalMs(): number {
    return this.deps.settings.tickMs;
  }

  protected round(): Promise<unknown> {
    return this.runOnce().catch((err) => this.deps.logger.warn({ err }, "webhook round failed"));
  }

  /** Stops the timer, waits for the round in progress, then closes the fetcher's connections. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.deps.fetcher.close();
  }

  /** One round: claims and sends every due delivery; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const due = await this.claim();
    await Promise.all(due.map((d) => this.deliver(d)));
    return due.length;
  }

  private claim(): Promise<WebhookDelivery[]> {
    const { deliveries, instanceId, settings } = this.deps;
    return deliveries.claimDue(instanceId, Date.now(), settings.leaseMs, BATCH);
  }

  private async deliver(d: WebhookDelivery): Promise<void> {
    const { deliveries, fetcher, settings } = this.deps;
    const attempts = Number(d.attempts) + 1;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const secret = await deliveries.signingSecret(Number(d.user_id));
      const record = await this.deps.renderTask(d.task_id, Number(d.user_id));
      if (!secret) throw new Error("the user has no webhook signing secret");
      if (record === null) throw new Error("the task no longer exists");
      const timestamp = unixNow();
      const body = JSON.stringify({ type: d.event, timestamp: new Date(timestamp * 1000).toISOString(), data: record });
      const res = await fetcher.fetch(d.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "media-gateway-webhooks",
          "webhook-id": d.webhook_id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signWebhook(secret, d.webhook_id, timestamp, body),
        },
        body,
        maxBytes: 64 * 1024,
        timeoutMs: settings.timeoutMs,
        maxRedirects: 0,
      });
      status = res.status;
      if (status < 200 || status >= 300) error = `receiver answered HTTP ${status}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const attempt = { attempts, status, error };
    if (error === null) {
      await deliveries.finish(d.id, this.deps.instanceId, { ...attempt, outcome: "delivered" });
    } else if (Number(d.created_at) + settings.maxAgeSeconds <= unixNow()) {
      await deliveries.finish(d.id, this.deps.instanceId, { ...attempt, outcome: "failed" });
    } else {
      const delay = Math.min(settings.retryBaseMs * 2 ** (attempts - 1), MAX_RETRY_MS);
      const nextAttemptAt = Date.now() + Math.round(delay * (0.9 + Math.random() * 0.2));
      await deliveries.finish(d.id, this.deps.instanceId, { ...attempt, outcome: "retry", nextAttemptAt });
    }
  }
}
