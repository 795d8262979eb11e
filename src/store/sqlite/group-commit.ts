import type { SqliteConnection } from "./connection.js";

interface Pending {
  run: () => unknown;
  /** A plain operation: no savepoint of its own (see GroupCommit.runPlain). */
  plain: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | null;
}

/** Told of every run of a batch, inside its transaction (see BatchBalances). */
export interface BatchHooks {
  /** A run starts: `bare` for the first run, false for the guarded one. */
  begin(bare: boolean): void;
  /** The run's operations are done; what it writes here is committed with them. */
  end(): void;
  /** The run was rolled back. */
  reset(): void;
}

/** Most operations one transaction takes; a longer queue is committed in several. */
const MAX_BATCH = 256;

/** Thrown inside a batch to roll it back whole and run it again with a savepoint per operation. */
const AGAIN_GUARDED = Symbol("run the batch again, a savepoint per operation");

/**
 * Group commit for SQLite: the stand-alone write operations asked for during one turn of the
 * event loop are run together in one transaction. An operation that throws is undone alone and
 * its caller gets the error; the others commit. Every caller is answered only after the commit,
 * so a resolved operation is committed exactly as if it had had a transaction of its own.
 *
 * A commit is the costly part of a small SQLite transaction (the write-ahead log is appended and,
 * every so many pages, checkpointed); under load one commit then serves many requests.
 *
 * Two kinds of operation: a transaction function of the connection (`run`) nests as a savepoint
 * of its own and is undone alone when it throws. A plain operation (`runPlain`) runs with no
 * savepoint: each savepoint costs its statements and a copy of every page the operation first
 * touches, about a fifth of a ledger operation. Should a plain operation throw, the whole batch
 * is rolled back and run once more with every plain operation in a savepoint of its own, so the
 * outcome is the same as if each had had one from the start (the operations are synchronous
 * functions of what the store holds, and nothing else writes between the two runs).
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly runBatch: (ops: Pending[]) => void;
  private readonly runGuarded: (ops: Pending[]) => void;
  private readonly savepoint: (fn: () => unknown) => unknown;
  private readonly hooks: BatchHooks[] = [];

  /**
   * @param hold runs `fn` while holding the store's only connection, so that no transaction of
   *   the query builder is open around the batch.
   */
  constructor(
    db: SqliteConnection,
    private readonly hold: (fn: () => void) => Promise<void>,
  ) {
    this.savepoint = db.transaction((fn: () => unknown) => fn());
    this.runBatch = db.transaction((ops: Pending[]) => {
      for (const hooks of this.hooks) hooks.begin(true);
      for (const op of ops) {
        try {
          op.outcome = { ok: true, value: op.run() };
        } catch (error) {
          // SQLite itself rolled the whole transaction back (disk full, I/O error): nothing in
          // this batch is committed, so every operation of it fails.
          if (!db.inTransaction) throw error;
          // A plain operation may have written part of its work: start again, guarded.
          if (op.plain) throw AGAIN_GUARDED;
          op.outcome = { ok: false, error };
        }
      }
      for (const hooks of this.hooks) hooks.end();
    });
    this.runGuarded = db.transaction((ops: Pending[]) => {
      for (const hooks of this.hooks) hooks.begin(false);
      for (const op of ops) {
        try {
          op.outcome = { ok: true, value: op.plain ? this.savepoint(op.run) : op.run() };
        } catch (error) {
          if (!db.inTransaction) throw error;
          op.outcome = { ok: false, error };
        }
      }
      for (const hooks of this.hooks) hooks.end();
    });
  }

  /** Adds hooks told of every run of a batch. */
  addBatchHooks(hooks: BatchHooks): void {
    this.hooks.push(hooks);
  }

  /**
   * Queues `operation` (a transaction function of the connection, so that it nests as a savepoint)
   * and resolves with its result once the batch that ran it is committed.
   */
  run<T>(operation: () => T): Promise<T> {
    return this.enqueue(operation, false);
  }

  /**
   * Queues a plain synchronous operation, run with no savepoint of its own, and resolves with its
   * result once the batch that ran it is committed; when it throws, its caller gets the error and
   * nothing it wrote is kept. An expected refusal is cheaper returned as a value before anything
   * is written: a throw makes the whole batch run twice.
   */
  runPlain<T>(operation: () => T): Promise<T> {
    return this.enqueue(operation, true);
  }

  private enqueue<T>(operation: () => T, plain: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: operation, plain, resolve: resolve as (value: unknown) => void, reject, outcome: null });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private runOnce(ops: Pending[]): void {
    try {
      try {
        this.runBatch(ops);
      } catch (err) {
        if (err !== AGAIN_GUARDED) throw err;
        for (const hooks of this.hooks) hooks.reset();
        for (const op of ops) op.outcome = null;
        this.runGuarded(ops);
      }
    } catch (err) {
      for (const hooks of this.hooks) hooks.reset();
      throw err;
    }
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const ops = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    try {
      await this.hold(() => this.runOnce(ops));
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
