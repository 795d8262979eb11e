import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

/** An open charge as the reaper sees it. */
export interface OverdueCharge {
  reference: string;
  userId: number;
  held: number;
  seen: number | null;
  instance: string;
}

/**
 * The open charges: found by the reaper when overdue, and by an instance at start when it left
 * them open. Closing one goes through the ledger (settle or refund), never here.
 */
export class Charges {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: "sqlite" | "postgres",
  ) {}

  /**
   * Leases up to `limit` open charges whose close-by time has passed and that no reaper holds,
   * until `nowMs + leaseMs`. On PostgreSQL rows another reaper is claiming are skipped
   * (`FOR UPDATE SKIP LOCKED`); SQLite runs the statement as its single writer. A charge whose
   * closing fails is claimed again once its lease runs out: it is retried until it closes.
   */
  async claimOverdue(nowMs: number, leaseMs: number, limit: number): Promise<OverdueCharge[]> {
    let due = this.db
      .selectFrom("charges")
      .select("reference")
      .where("state", "=", "open")
      .where("close_by", "<=", nowMs)
      .where("lease_until", "<=", nowMs)
      .orderBy("close_by")
      .limit(limit);
    if (this.dialect === "postgres") due = due.forUpdate().skipLocked();
    const rows = await this.db
      .updateTable("charges")
      .set({ lease_until: nowMs + leaseMs })
      .where("reference", "in", due)
      .where("state", "=", "open")
      .returning(["reference", "user_id", "held", "seen", "instance"])
      .execute();
    return rows.map((r) => ({
      reference: r.reference,
      userId: Number(r.user_id),
      held: Number(r.held),
      seen: r.seen === null ? null : Number(r.seen),
      instance: r.instance,
    }));
  }

  /**
   * Makes due at once the charges `instance` opened before `startedAt` (Unix seconds) and left
   * open: calls of a previous run of this instance, which no one will finish. Task charges stay:
   * a task outlives the process that submitted it and closes with the task. Returns how many.
   */
  async expireLeftOpen(instance: string, startedAt: number, nowMs: number): Promise<number> {
    const res = await this.db
      .updateTable("charges")
      .set({ close_by: nowMs, lease_until: 0 })
      .where("state", "=", "open")
      .where("instance", "=", instance)
      .where("created_at", "<", startedAt)
      .where("reference", "not like", "task:%")
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** One charge's lifecycle row (operators and tests read it). */
  find(reference: string) {
    return this.db.selectFrom("charges").selectAll().where("reference", "=", reference).executeTakeFirst();
  }

  /** How many charges are open, and how many of them are past their close-by time. */
  async openCounts(nowMs: number): Promise<{ open: number; overdue: number }> {
    const row = await this.db
      .selectFrom("charges")
      .select([
        sql<number>`count(*)`.as("open"),
        sql<number>`coalesce(sum(case when close_by <= ${nowMs} then 1 else 0 end), 0)`.as("overdue"),
      ])
      .where("state", "=", "open")
      .executeTakeFirstOrThrow();
    return { open: Number(row.open), overdue: Number(row.overdue) };
  }
}
