import { type ClosingOutcome, refusedHold } from "../../core/ledger/charge-rules.js";
import {
  type HoldInput,
  type HoldRefusal,
  type HoldWith,
  type LedgerEngine,
  QueryBuilderForms,
} from "../ledger-engine.js";
import type { SqliteConnection } from "./connection.js";
import type { GroupCommit } from "./group-commit.js";
import { SqliteLedger } from "./ledger.js";
import type { SqliteStore } from "./open-store.js";

/**
 * The ledger's engine on SQLite: each stand-alone operation is a synchronous function over
 * prepared statements (SqliteLedger), run as a plain operation of the store's group commit, so
 * that the operations of one event-loop turn share one commit; a hold with other writes (a task's
 * submit) is a savepoint of the same commits. Top-ups and the operations inside larger
 * transactions take the query builder (ledger-steps.ts).
 */
export class SqliteLedgerEngine extends QueryBuilderForms implements LedgerEngine {
  readonly locksRows = false;
  private readonly sqlite: SqliteConnection;
  private readonly commits: GroupCommit;
  private readonly operations: SqliteLedger;
  /** A transaction function of the connection that runs what it is given (a savepoint inside a batch). */
  private readonly savepoint: <T>(work: () => T) => T;

  constructor(store: Pick<SqliteStore, "db" | "sqlite" | "commits">) {
    super(store.db);
    this.sqlite = store.sqlite;
    this.commits = store.commits;
    this.operations = new SqliteLedger(store.sqlite, store.commits);
    this.savepoint = store.sqlite.transaction(<R>(run: () => R) => run()) as <R>(run: () => R) => R;
  }

  hold(input: HoldInput): Promise<HoldRefusal | null> {
    return this.commits.runPlain(() => this.operations.charge(input));
  }

  settle(reference: string, actual: number, note: string): Promise<ClosingOutcome> {
    return this.commits.runPlain(() => this.operations.settle(reference, actual, note));
  }

  refund(reference: string, note: string): Promise<ClosingOutcome> {
    return this.commits.runPlain(() => this.operations.refund(reference, note));
  }

  noteUsage(reference: string, seen: number, closeBy: number): Promise<void> {
    return this.commits.runPlain(() => this.operations.noteUsage(reference, seen, closeBy));
  }

  inCommit<T>(synchronous: (db: SqliteConnection) => T): Promise<T> {
    return this.commits.runPlain(() => this.savepoint(() => synchronous(this.sqlite)));
  }

  /** The synchronous form, in a savepoint of the group commit: the charge commits with what it writes, or neither. */
  holdWith<T>(input: HoldInput, forms: HoldWith<T>): Promise<T> {
    return this.inCommit((db) =>
      forms.synchronous(db, () => {
        // A refusal throws, so that nothing is written after it; the savepoint is undone.
        const refusedBy = this.operations.charge(input);
        if (refusedBy) throw refusedHold(refusedBy);
      }),
    );
  }
}
