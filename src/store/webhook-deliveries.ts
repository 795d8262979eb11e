import type { Kysely, Selectable } from "kysely";
import { unixNow } from "../core/ids.js";
import type { Database, WebhookDeliveriesTable } from "./schema.js";

export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;

/** How an attempt at a delivery ended, as the dispatcher decided it. */
export type DeliveryAttempt = { attempts: number; status: number | null; error: string | null } & (
  | { outcome: "delivered" }
  | { outcome: "failed" }
  | { outcome: "retry"; nextAttemptAt: number }
);

/**
 * The queued webhooks: claimed with a lease by any number of dispatchers (on PostgreSQL, rows
 * another dispatcher is claiming are skipped), and finished by the dispatcher that claimed them.
 */
export class WebhookDeliveries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lockRows: boolean,
  ) {}

  /** Leases up to `limit` pending deliveries due by `nowMs` that no dispatcher holds. */
  claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<WebhookDelivery[]> {
    return this.db
      .updateTable("webhook_deliveries")
      .set({ lease_owner: owner, lease_until: nowMs + leaseMs })
      .where("id", "in", (eb) => {
        let q = eb
          .selectFrom("webhook_deliveries")
          .select("id")
          .where("status", "=", "pending")
          .where("next_attempt_at", "<=", nowMs)
          .where("lease_until", "<", nowMs)
          .orderBy("next_attempt_at")
          .limit(limit);
        if (this.lockRows) q = q.forUpdate().skipLocked();
        return q;
      })
      .returningAll()
      .execute();
  }

  /** The secret a user's webhooks are signed with (null when the user or the secret is gone). */
  async signingSecret(userId: number): Promise<string | null> {
    const user = await this.db.selectFrom("users").select("webhook_secret").where("id", "=", userId).executeTakeFirst();
    return user?.webhook_secret ?? null;
  }

  /** Records an attempt and lets the lease go, if `owner` still holds the delivery. */
  async finish(id: number, owner: string, attempt: DeliveryAttempt): Promise<void> {
    const base = {
      attempts: attempt.attempts,
      last_status: attempt.status,
      last_error: attempt.error ? attempt.error.slice(0, 500) : null,
      lease_owner: null,
      lease_until: 0,
    };
    const update = this.db.updateTable("webhook_deliveries").where("id", "=", id).where("lease_owner", "=", owner);
    if (attempt.outcome === "delivered") {
      await update.set({ ...base, status: "delivered", delivered_at: unixNow() }).execute();
    } else if (attempt.outcome === "failed") {
      await update.set({ ...base, status: "failed" }).execute();
    } else {
      await update.set({ ...base, next_attempt_at: attempt.nextAttemptAt }).execute();
    }
  }
}
