import type { SqliteConnection } from "./connection.js";

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | null;
}

/** Most operations one transaction takes; a longer queue is committed in several. */
const MAX_BATCH = 256;

/**
 * Group commit for SQLite: the stand-alone write operations asked for during one turn of the
 * event loop are run together in one transaction, each inside a savepoint of its own. An
 * operation that throws is rolled back to its savepoint alone and its caller gets the error; the
 * others commit. Every caller is answered only after the commit, so a resolved operation is
 * committed exactly as if it had had a transaction of its own.
 *
 * A commit is the costly part of a small SQLite transaction (the write-ahead log is appended and,
 * every so many pages, checkpointed); under load one commit then serves many requests.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly runBatch: (ops: Pending[]) => void;

  /**
   * @param hold runs `fn` while holding the store's only connection, so that no transaction of
   *   the query builder is open around the batch.
   */
  constructor(
    db: SqliteConnection,
    private readonly hold: (fn: () => void) => Promise<void>,
  ) {
    this.runBatch = db.transaction((ops: Pending[]) => {
      for (const op of ops) {
        try {
          op.outcome = { ok: true, value: op.run() };
        } catch (error) {
          // SQLite itself rolled the whole transaction back (disk full, I/O error): nothing in
          // this batch is committed, so every operation of it fails.
          if (!db.inTransaction) throw error;
          op.outcome = { ok: false, error };
        }
      }
    });
  }

  /**
   * Queues `operation` (a transaction function of the connection, so that it nests as a savepoint)
   * and resolves with its result once the batch that ran it is committed.
   */
  run<T>(operation: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: operation, resolve: resolve as (value: unknown) => void, reject, outcome: null });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const ops = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    try {
      await this.hold(() => this.runBatch(ops));
    } catch (err) {
      for (const op of ops) op.reject(err);
      return;
    }
    for (const op of ops) {
      if (op.outcome?.ok) op.resolve(op.outcome.value);
      else op.reject(op.outcome ? op.outcome.error : new Error("operation did not run"));
    }
  }
}
