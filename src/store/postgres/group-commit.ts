import type { Kysely } from "kysely";
import type pg from "pg";
import type { OpenCharge } from "../../core/ledger/charge-rules.js";
import type { Database } from "../schema.js";
import { GuardedRunNeeded, runBatch } from "./ledger-batch.js";
import type { LedgerOp, OpOutcome, OpResult } from "./ledger-op.js";
import { runPipelined } from "./pipelined-batch.js";

interface Pending {
  op: LedgerOp;
  resolve: (value: OpResult) => void;
  reject: (err: unknown) => void;
}

/** Most operations one transaction takes; a longer queue is committed in several. */
const MAX_BATCH = 256;
/** Most charges remembered as opened here (the oldest are forgotten first; see `opened`). */
const MAX_REMEMBERED = 100_000;
/** Times a batch is run again when PostgreSQL broke a lock cycle by aborting it. */
const RETRIES = 3;

/** A deadlock or serialization failure: the transaction changed nothing and may run again. */
function retryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}

/**
 * Group commit for the ledger on PostgreSQL: the stand-alone holds, refunds and settlements asked
 * for while the previous batch was committing (at least one event-loop turn) run together in one
 * transaction, with one statement per kind of operation (see ledger-batch.ts). Each caller is
 * answered after the commit with the outcome it would have had alone. One batch is in flight at a
 * time, so a hot user's row is locked by one transaction of this instance at a time, for the last
 * statement of the batch and its commit.
 */
export class PgLedgerCommits {
  private queue: Pending[] = [];
  private scheduled = false;
  private running = false;
  /**
   * The charges this instance opened and has not closed yet, as their rows say (user, token,
   * hold): the closes of a batch whose charges are all here go in the batch's one statement,
   * checked against these rows (pipelined-batch.ts). A charge forgotten or closed elsewhere only
   * costs its batch the longer way.
   */
  private readonly opened = new Map<string, OpenCharge>();

  /**
   * `pipelined`: a pool whose connections pipeline their statements, for the bare run of each
   * batch (pipelined-batch.ts); without it, the bare run goes through the query builder too.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly pipelined?: pg.Pool,
  ) {}

  run(op: LedgerOp): Promise<OpResult> {
    return new Promise<OpResult>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      const outcomes = await this.commit(batch.map((p) => p.op));
      for (const [k, p] of batch.entries()) {
        const outcome = outcomes[k];
        this.remember(p.op, outcome?.ok === true);
        if (outcome?.ok) p.resolve(outcome.value);
        else p.reject(outcome ? outcome.error : new Error("operation did not run"));
      }
    } catch (err) {
      for (const p of batch) {
        this.remember(p.op, false);
        p.reject(err);
      }
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  private remember(op: LedgerOp, done: boolean): void {
    if (op.kind !== "hold") {
      this.opened.delete(op.reference);
      return;
    }
    if (!done) return;
    const { row, held } = op.opening;
    this.opened.set(op.reference, { userId: row.userId, tokenId: row.tokenId, held });
    if (this.opened.size > MAX_REMEMBERED) {
      for (const reference of this.opened.keys()) {
        this.opened.delete(reference);
        if (this.opened.size <= MAX_REMEMBERED) break;
      }
    }
  }

  private async commit(ops: LedgerOp[]): Promise<OpOutcome[]> {
    // A lone operation too: as a batch of one it takes the batch's statements of fixed text (a
    // refused one is answered as alone in the guarded run), fewer than its own steps. The first
    // run is bare (no savepoints); a batch that does not go through together runs again guarded.
    let guarded = false;
    if (this.pipelined) {
      try {
        const outcomes = await runPipelined(this.pipelined, ops, this.opened);
        if (outcomes) return outcomes;
      } catch (err) {
        if (!(err instanceof GuardedRunNeeded)) throw err;
        guarded = true;
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => runBatch(trx, ops, guarded));
      } catch (err) {
        if (err instanceof GuardedRunNeeded && !guarded) {
          guarded = true;
          continue;
        }
        if (attempt >= RETRIES || !retryable(err)) throw err;
      }
    }
  }
}
