import type { FastifyBaseLogger } from "fastify";
import type { Kysely, Selectable } from "kysely";
import { unixNow } from "../core/ids.js";
import type { GuardedFetcher } from "../net/guarded-fetch.js";
import { PeriodicService } from "../periodic-service.js";
import type { Database, WebhookDeliveriesTable } from "../store/schema.js";
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
  db: Kysely<Database>;
  lockRows: boolean;
  instanceId: string;
  logger: FastifyBaseLogger;
  fetcher: GuardedFetcher;
  settings: WebhookSettings;
  /** The task record exactly as a fetch shows it to its owner, or null when it is gone. */
  renderTask(taskId: string, userId: number): Promise<unknown | null>;
}

type Delivery = Selectable<WebhookDeliveriesTable>;

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

  private async claim(): Promise<Delivery[]> {
    const { db, lockRows, instanceId, settings } = this.deps;
    const now = Date.now();
    return db
      .updateTable("webhook_deliveries")
      .set({ lease_owner: instanceId, lease_until: now + settings.leaseMs })
      .where("id", "in", (eb) => {
        let q = eb
          .selectFrom("webhook_deliveries")
          .select("id")
          .where("status", "=", "pending")
          .where("next_attempt_at", "<=", now)
          .where("lease_until", "<", now)
          .orderBy("next_attempt_at")
          .limit(BATCH);
        if (lockRows) q = q.forUpdate().skipLocked();
        return q;
      })
      .returningAll()
      .execute();
  }

  private async deliver(d: Delivery): Promise<void> {
    const { db, fetcher, settings } = this.deps;
    const attempts = Number(d.attempts) + 1;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const user = await db.selectFrom("users").select("webhook_secret").where("id", "=", d.user_id).executeTakeFirst();
      const record = await this.deps.renderTask(d.task_id, Number(d.user_id));
      if (!user?.webhook_secret) throw new Error("the user has no webhook signing secret");
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
          "webhook-signature": signWebhook(user.webhook_secret, d.webhook_id, timestamp, body),
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
    const base = {
      attempts,
      last_status: status,
      last_error: error ? error.slice(0, 500) : null,
      lease_owner: null,
      lease_until: 0,
    };
    let update = db
      .updateTable("webhook_deliveries")
      .where("id", "=", d.id)
      .where("lease_owner", "=", this.deps.instanceId);
    if (error === null) {
      update = update.set({ ...base, status: "delivered", delivered_at: unixNow() });
    } else if (Number(d.created_at) + settings.maxAgeSeconds <= unixNow()) {
      update = update.set({ ...base, status: "failed" });
    } else {
      const delay = Math.min(settings.retryBaseMs * 2 ** (attempts - 1), MAX_RETRY_MS);
      update = update.set({ ...base, next_attempt_at: Date.now() + Math.round(delay * (0.9 + Math.random() * 0.2)) });
    }
    await update.execute();
  }
}
