import type { FastifyBaseLogger } from "fastify";
import { unixNow } from "../core/ids.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import { RETENTION_KIND_NAMES, type RetentionKindName, type RetentionRows } from "../store/retention.js";

export interface RetentionSettings {
  /** Days each kind of row is kept; 0 keeps it for ever. */
  days: Record<RetentionKindName, number>;
  intervalMs: number;
  /** Most rows one delete removes. */
  batchRows: number;
  /** Pause between two deletes (ms). */
  batchPauseMs: number;
}

/** What one round removed (and, on PostgreSQL, which months of the request log it made or dropped). */
export interface RetentionRound {
  deleted: Partial<Record<RetentionKindName, number>>;
  batches: Partial<Record<RetentionKindName, number>>;
  monthsCreated: string[];
  monthsDropped: string[];
}

const DAY = 86_400;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Removes the rows older than their kind's retention, one small batch at a time with a pause
 * between batches, so the requests' own writes (the request log's flushes, the ledger) go between
 * them rather than waiting for one long delete; a round goes on until a batch comes back short.
 * On PostgreSQL it also keeps the request log's months: the coming ones created ahead of their
 * rows, those wholly past the retention dropped whole. It runs on the worker and all roles; any
 * number of instances may run it at once (a batch deletes what is there; the months' upkeep is
 * done by one instance at a time).
 */
export class RetentionPruner extends PeriodicService {
  readonly name = "retention-pruner";
  private stopping = false;

  constructor(
    private readonly rows: Pick<RetentionRows, "pruneBatch" | "upkeepMonths">,
    private readonly settings: RetentionSettings,
    private readonly log: Pick<FastifyBaseLogger, "info" | "warn">,
    private readonly now: () => number = unixNow,
    private readonly pause: (ms: number) => Promise<void> = sleep,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.settings.intervalMs;
  }

  override async stop(): Promise<void> {
    this.stopping = true;
    await super.stop();
  }

  /** The cutoff of a kind (unix seconds): rows older go. Null when the kind is kept for ever. */
  private cutoff(kind: RetentionKindName, now: number): number | null {
    const days = this.settings.days[kind];
    return days > 0 ? now - days * DAY : null;
  }

  async round(): Promise<RetentionRound> {
    const report: RetentionRound = { deleted: {}, batches: {}, monthsCreated: [], monthsDropped: [] };
    const now = this.now();
    try {
      const months = await this.rows.upkeepMonths(now, this.cutoff("request_logs", now));
      if (months) {
        report.monthsCreated = months.created;
        report.monthsDropped = months.dropped;
      }
    } catch (err) {
      this.log.warn({ err }, "the request log's monthly partitions could not be kept; the next round tries again");
    }
    for (const kind of RETENTION_KIND_NAMES) {
      const cutoff = this.cutoff(kind, now);
      if (cutoff === null) continue;
      try {
        await this.prune(kind, cutoff, report);
      } catch (err) {
        this.log.warn({ err, kind }, "pruning old rows failed; the next round tries again");
      }
    }
    const deleted = Object.values(report.deleted).reduce((n, d) => n + (d ?? 0), 0);
    if (deleted > 0 || report.monthsCreated.length > 0 || report.monthsDropped.length > 0) {
      this.log.info(report, "pruned rows past their retention");
    }
    return report;
  }

  private async prune(kind: RetentionKindName, cutoff: number, report: RetentionRound): Promise<void> {
    const limit = this.settings.batchRows;
    for (;;) {
      const n = await this.rows.pruneBatch(kind, cutoff, limit);
      if (n > 0) {
        report.deleted[kind] = (report.deleted[kind] ?? 0) + n;
        report.batches[kind] = (report.batches[kind] ?? 0) + 1;
      }
      if (n < limit || this.stopping) return;
      await this.pause(this.settings.batchPauseMs);
    }
  }
}
