import { type Kysely, sql } from "kysely";
import type { Dialect } from "./database.js";
import { isPartitioned, type PartitionUpkeep, upkeepPartitions } from "./request-log-partitions.js";

/**
 * A kind of row kept for a while, then pruned: its table, the column of its time (unix seconds)
 * and which of its old rows may go. A new kind (stored Responses, say) is one entry here and one
 * setting of days in `retention` (config/schema.ts); the pruner handles every kind alike. The
 * ledger is not a kind and never will be: it is the account of every balance.
 */
export interface RetentionKind {
  table: string;
  timeColumn: string;
  /** SQL condition on the rows that may be pruned once old; every old row when absent. */
  prunable?: string;
  /**
   * PostgreSQL: the table is partitioned by month of its time (migration 013). Its months are
   * dropped whole (`request-log-partitions.ts`); rows are deleted one batch at a time only from
   * its default partition, which holds rows of months that had no partition yet.
   */
  monthlyPartitions?: { defaultPartition: string };
}

export const RETENTION_KINDS = {
  request_logs: {
    table: "request_logs",
    timeColumn: "created_at",
    monthlyPartitions: { defaultPartition: "request_logs_default" },
  },
  task_events: { table: "task_events", timeColumn: "at" },
  // A delivery still pending is kept, however old: its dispatcher gives it up first (failed).
  webhook_deliveries: { table: "webhook_deliveries", timeColumn: "created_at", prunable: "status <> 'pending'" },
} as const satisfies Record<string, RetentionKind>;

export type RetentionKindName = keyof typeof RETENTION_KINDS;
export const RETENTION_KIND_NAMES = Object.keys(RETENTION_KINDS) as RetentionKindName[];

/** The store's side of the pruner: one batch of a kind, and the request log's partitions. */
export class RetentionRows {
  private partitioned: Promise<boolean> | null = null;

  constructor(
    private readonly db: Kysely<any>,
    private readonly dialect: Dialect,
  ) {}

  /** True when `kind`'s old months are dropped whole rather than deleted by rows (PostgreSQL). */
  async dropsMonths(kind: RetentionKindName): Promise<boolean> {
    const k: RetentionKind = RETENTION_KINDS[kind];
    if (!k.monthlyPartitions || this.dialect !== "postgres") return false;
    this.partitioned ??= isPartitioned(this.db);
    return this.partitioned;
  }

  /**
   * Deletes at most `limit` rows of `kind` older than `cutoff` (unix seconds), oldest first by the
   * time's index; answers how many went. One short statement, so the requests' own writes wait for
   * it at most that long.
   */
  async pruneBatch(kind: RetentionKindName, cutoff: number, limit: number): Promise<number> {
    const k: RetentionKind = RETENTION_KINDS[kind];
    const table =
      (await this.dropsMonths(kind)) && k.monthlyPartitions ? k.monthlyPartitions.defaultPartition : k.table;
    const extra = k.prunable ? sql` and ${sql.raw(k.prunable)}` : sql``;
    const result = await sql`delete from ${sql.id(table)} where id in (
        select id from ${sql.id(table)}
        where ${sql.ref(k.timeColumn)} < ${sql.lit(Math.trunc(cutoff))}${extra}
        order by ${sql.ref(k.timeColumn)} limit ${sql.lit(Math.trunc(limit))})`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /**
   * PostgreSQL: creates the request log's coming months and drops those wholly before `cutoff`
   * (null: none dropped). Null on a store without partitions.
   */
  async upkeepMonths(nowAt: number, cutoff: number | null): Promise<PartitionUpkeep | null> {
    if (!(await this.dropsMonths("request_logs"))) return null;
    return upkeepPartitions(this.db, nowAt, cutoff);
  }
}
