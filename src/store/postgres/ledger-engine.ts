import type { Kysely } from "kysely";
import pg from "pg";
import { type ClosingOutcome, openCharge } from "../../core/ledger/charge-rules.js";
import { type HoldInput, type HoldWith, type LedgerEngine, QueryBuilderForms } from "../ledger-engine.js";
import { noteSeenUsage } from "../ledger-statements.js";
import { holdStep } from "../ledger-steps.js";
import type { Database } from "../schema.js";
import { PgLedgerCommits } from "./group-commit.js";

/**
 * The ledger's engine on PostgreSQL: the stand-alone holds, settlements and refunds go through
 * the group commit (group-commit.ts), batched per event-loop turn, each batch first run bare on a
 * connection that pipelines (pipelined-batch.ts); a hold with other writes (a task's submit) is
 * one statement of its own, run again statement by statement when PostgreSQL refuses it. Top-ups,
 * the usage notes and the operations inside larger transactions take the query builder
 * (ledger-steps.ts).
 */
export class PgLedgerEngine extends QueryBuilderForms implements LedgerEngine {
  readonly locksRows = true;
  private readonly commits: PgLedgerCommits;

  /** `pipelined`: the store's pool whose connections pipeline, for the batches' bare runs. */
  constructor(db: Kysely<Database>, pipelined?: pg.Pool) {
    super(db);
    this.commits = new PgLedgerCommits(db, pipelined);
  }

  /** A refused hold is thrown (the batch's guarded run meets the refusal as a transaction of its own would). */
  hold(input: HoldInput): Promise<undefined> {
    const op = { kind: "hold", reference: input.reference, opening: openCharge(input), meta: input } as const;
    return this.commits.run(op) as Promise<undefined>;
  }

  settle(reference: string, actual: number, note: string): Promise<ClosingOutcome> {
    return this.commits.run({ kind: "settle", reference, actual, note }) as Promise<ClosingOutcome>;
  }

  refund(reference: string, note: string): Promise<ClosingOutcome> {
    return this.commits.run({ kind: "refund", reference, note }) as Promise<ClosingOutcome>;
  }

  noteUsage(reference: string, seen: number, closeBy: number): Promise<void> {
    return noteSeenUsage(this.db, reference, seen, closeBy);
  }

  inCommit<T>(_synchronous: unknown, otherwise: () => Promise<T>): Promise<T> {
    return otherwise();
  }

  /**
   * The one statement; when PostgreSQL refuses it (an error it reports: nothing was written), the
   * transaction of single statements, which names the refusal. Any other failure (a lost
   * connection, whose outcome is not known) is thrown.
   */
  async holdWith<T>(input: HoldInput, forms: HoldWith<T>): Promise<T> {
    const opening = openCharge(input);
    try {
      return await forms.oneStatement(opening, input);
    } catch (err) {
      if (!(err instanceof pg.DatabaseError)) throw err;
    }
    return this.inTransaction((trx) => forms.inTransaction(trx, () => holdStep(trx, opening, input)));
  }
}
