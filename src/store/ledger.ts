import type { Kysely, Transaction } from "kysely";
import {
  assertLedgerAmount,
  type ChargeOpening,
  type ClosingOutcome,
  closed,
  NOT_APPLIED,
  openCharge,
  refusedHold,
  topUpRow,
} from "../core/ledger/charge-rules.js";
import type { Store } from "./database.js";
import { type Executor, insertTopUp, ledgerEntries, ledgerSumOf, noteSeenUsage } from "./ledger-statements.js";
import { holdStep, type OpeningMeta, refundStep, settleStep } from "./ledger-steps.js";
import { PgLedgerCommits } from "./postgres/group-commit.js";
import type { Database } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import type { GroupCommit } from "./sqlite/group-commit.js";
import { SqliteLedger } from "./sqlite/ledger.js";
import { topUpLedgerReference } from "./top-up-reference.js";

export type LedgerKind = "charge" | "refund" | "settle" | "topup" | "adjust";
export type { Executor };

export interface ChargeInput {
  userId: number;
  tokenId: number | null;
  amount: number;
  /** Unique per charged thing: `task:<id>`, `image:<request id>`, `content:<request id>`. */
  reference: string;
  note?: string;
  /** Unix milliseconds by which the charge must be closed; default: now + the ledger's open time. */
  closeBy?: number;
}

/**
 * How a settlement or refund went. `applied` is false when the charge was not open (already
 * closed, or never charged): nothing changed. `uncollected`: cost above the hold that the credit
 * line or the token's limit did not allow to take (recorded on the charge).
 */
export type LedgerOutcome = ClosingOutcome;

/** Where charges are opened from, and how long they stay open by default. */
export interface ChargeOrigin {
  /** Name of this instance, written on every charge it opens (start-up recovery closes its own). */
  instance: string;
  /** Time a charge stays open when its opener gives no close-by time (ms). */
  openMs: number;
}

const DEFAULT_ORIGIN: ChargeOrigin = { instance: "unnamed", openMs: 10 * 60_000 };

/** One committed movement of quota, as an observer (metrics) hears it. */
export interface LedgerMovement {
  kind: LedgerKind;
  /** Signed amount added to the balance: negative for a charge. */
  amount: number;
}
export type LedgerObserver = (movement: LedgerMovement) => void;

/**
 * The money ledger. Every balance change is one append-only row written in the same transaction
 * as the balance update. Every charge also opens a row of `charges`, closed once (settled or
 * refunded) by a compare-and-set on its state; the rules of each step are those of
 * `core/ledger/charge-rules.ts` on every store path (PostgreSQL's batches add those of
 * `core/ledger/batch-rules.ts` and `core/ledger/in-order.ts`).
 */
export class Ledger {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lockRows: boolean,
    private readonly observer?: LedgerObserver,
    /**
     * On SQLite: the stand-alone operations as synchronous transactions (the hot path), run in
     * the store's group commits.
     */
    private readonly fastPath?: { ledger: SqliteLedger; commits: GroupCommit },
    readonly origin: ChargeOrigin = DEFAULT_ORIGIN,
    /** On PostgreSQL: the stand-alone operations, batched per event-loop turn. */
    private readonly pgCommits?: PgLedgerCommits,
  ) {}

  /** The ledger of a store: on SQLite with its synchronous fast path, on PostgreSQL with its group commit. */
  static forStore(store: Store, observer?: LedgerObserver, origin?: ChargeOrigin): Ledger {
    const fastPath =
      store.sqlite && store.commits
        ? { ledger: new SqliteLedger(store.sqlite, store.commits), commits: store.commits }
        : undefined;
    const pgCommits = store.dialect === "postgres" ? new PgLedgerCommits(store.db, store.ledgerPool) : undefined;
    return new Ledger(store.db, store.dialect === "postgres", observer, fastPath, origin, pgCommits);
  }

  /** The SQLite operations, or null where they are not (PostgreSQL). */
  private get sqlite(): SqliteLedger | null {
    return this.fastPath?.ledger ?? null;
  }

  /** Runs a stand-alone SQLite operation in the store's next group commit (a plain one: see GroupCommit). */
  private committed<T>(operation: () => T): Promise<T> {
    return (this.fastPath as { commits: GroupCommit }).commits.runPlain(operation);
  }

  /** Movements written inside a transaction opened by `transaction`, told once it commits. */
  private readonly pending = new WeakMap<object, LedgerMovement[]>();

  /** Runs `fn` in one transaction. The observer hears its movements only after the commit. */
  async transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const movements: LedgerMovement[] = [];
    const result = await this.db.transaction().execute((trx) => {
      this.pending.set(trx, movements);
      return fn(trx);
    });
    for (const m of movements) this.observer?.(m);
    return result;
  }

  /** Tells the observer, deferred to the commit when the transaction is one of ours. */
  private observe(trx: Executor, movement: LedgerMovement): void {
    if (!this.observer || movement.amount === 0) return;
    const queue = this.pending.get(trx);
    if (queue) queue.push(movement);
    else this.observer(movement);
  }

  private opening(input: ChargeInput) {
    assertLedgerAmount(input.amount, "charge amount");
    return {
      userId: input.userId,
      tokenId: input.tokenId,
      amount: input.amount,
      reference: input.reference,
      note: input.note ?? "",
      closeBy: input.closeBy ?? Date.now() + this.origin.openMs,
      instance: this.origin.instance,
    };
  }

  /**
   * Atomic conditional charge (a hold): the balance (down to minus the credit line) and the
   * token's limit are checked and decremented in one statement each, so a charge larger than
   * what is left changes nothing. Opens the charge's lifecycle row in the same transaction.
   */
  async chargeIn(trx: Executor, input: ChargeInput): Promise<void> {
    const open = this.opening(input);
    const opening = openCharge(open);
    await holdStep(trx, opening, open);
    this.observe(trx, { kind: "charge", amount: opening.row.amount });
  }

  /**
   * A hold that `statement` writes in one statement of its own (its own transaction), with the
   * rows of the opening given to it; the observer hears of the charge once it returns. It must
   * throw having written nothing when the hold, or anything written with it, is refused.
   */
  async holdInOneStatement<T>(
    input: ChargeInput,
    statement: (opening: ChargeOpening, meta: OpeningMeta) => Promise<T>,
  ): Promise<T> {
    const open = this.opening(input);
    const opening = openCharge(open);
    const result = await statement(opening, open);
    this.observe(this.db, { kind: "charge", amount: opening.row.amount });
    return result;
  }

  /** Charges in a transaction of its own (on PostgreSQL and SQLite, in the store's group commit). */
  async charge(input: ChargeInput): Promise<void> {
    const open = this.opening(input);
    const fast = this.sqlite;
    if (fast) {
      const refusedBy = await this.committed(() => fast.charge(open));
      if (refusedBy) throw refusedHold(refusedBy);
    } else if (this.pgCommits)
      await this.pgCommits.run({ kind: "hold", reference: open.reference, opening: openCharge(open), meta: open });
    else return this.transaction((trx) => this.chargeIn(trx, input));
    if (open.amount !== 0) this.observer?.({ kind: "charge", amount: -open.amount });
  }

  /** A transaction function of the SQLite connection that runs what it is given (made once). */
  private sqliteTransaction?: <T>(work: () => T) => T;

  /**
   * SQLite only: runs `work` as one synchronous transaction of the store's next group commit (a
   * savepoint of it, rolled back alone when `work` throws). Null where the store has no
   * synchronous path (PostgreSQL).
   */
  inSqliteCommit<T>(work: (db: SqliteConnection) => T): Promise<T> | null {
    const fast = this.sqlite;
    if (!fast) return null;
    this.sqliteTransaction ??= fast.db.transaction(<R>(run: () => R) => run()) as <R>(run: () => R) => R;
    const inTransaction = this.sqliteTransaction;
    return this.committed(() => inTransaction(() => work(fast.db)));
  }

  /**
   * SQLite only: `inSqliteCommit` where `hold()` takes the charge of `input` as `charge` does: the
   * charge commits with what `work` writes, or is rolled back with it when `work` (or the hold)
   * throws. Null where the store has no synchronous path (PostgreSQL: `transaction` and
   * `chargeIn` instead).
   */
  withSqliteHold<T>(input: ChargeInput, work: (db: SqliteConnection, hold: () => void) => T): Promise<T> | null {
    const fast = this.sqlite;
    if (!fast) return null;
    const open = this.opening(input);
    let held = false;
    const hold = () => {
      // A refusal throws, so that `work` writes nothing after it; the transaction is undone.
      const refusedBy = fast.charge(open);
      if (refusedBy) throw refusedHold(refusedBy);
      held = true;
    };
    return (this.inSqliteCommit((db) => work(db, hold)) as Promise<T>).then((result) => {
      if (held && open.amount !== 0) this.observer?.({ kind: "charge", amount: -open.amount });
      return result;
    });
  }

  /** Gives back everything an open charge holds and closes it as refunded. At most once. */
  async refundIn(trx: Executor, reference: string, note = ""): Promise<LedgerOutcome> {
    const outcome = await refundStep(trx, reference, note);
    if (outcome.applied) this.observe(trx, { kind: "refund", amount: outcome.amount });
    return outcome;
  }

  async refund(reference: string, note = ""): Promise<LedgerOutcome> {
    const fast = this.sqlite;
    let outcome: LedgerOutcome;
    if (fast) outcome = await this.committed(() => fast.refund(reference, note));
    else if (this.pgCommits) outcome = (await this.pgCommits.run({ kind: "refund", reference, note })) as LedgerOutcome;
    else return this.transaction((trx) => this.refundIn(trx, reference, note));
    if (outcome.applied && outcome.amount !== 0) this.observer?.({ kind: "refund", amount: outcome.amount });
    return outcome;
  }

  /**
   * Settles an open charge to what it really cost and closes it: the difference within the hold
   * is given back; a cost above the hold is taken only down to minus the credit line (and within
   * the token's limit), the rest recorded on the charge as uncollected. At most once.
   */
  async settleIn(trx: Executor, reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    assertLedgerAmount(actualAmount, "settled amount");
    const outcome = await settleStep(trx, reference, actualAmount, note, this.lockRows);
    if (outcome.applied) this.observe(trx, { kind: "settle", amount: outcome.amount });
    return outcome;
  }

  async settle(reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    const fast = this.sqlite;
    if (!fast && !this.pgCommits) return this.transaction((trx) => this.settleIn(trx, reference, actualAmount, note));
    assertLedgerAmount(actualAmount, "settled amount");
    const outcome = fast
      ? await this.committed(() => fast.settle(reference, actualAmount, note))
      : ((await this.pgCommits?.run({ kind: "settle", reference, actual: actualAmount, note })) as LedgerOutcome);
    if (outcome.applied && outcome.amount !== 0) this.observer?.({ kind: "settle", amount: outcome.amount });
    return outcome;
  }

  /**
   * Records on an open charge the cost of the usage seen so far (what the reaper settles to should
   * its opener die) and keeps it open until at least `closeBy`. One statement, not on the balance.
   */
  async noteUsage(reference: string, seen: number, closeBy: number): Promise<void> {
    assertLedgerAmount(seen, "seen amount");
    const fast = this.sqlite;
    if (fast) return this.committed(() => fast.noteUsage(reference, seen, closeBy));
    await noteSeenUsage(this.db, reference, seen, closeBy);
  }

  /** Adds quota to a user (operator top-up). Idempotent by reference, per user. */
  async topUp(userId: number, amount: number, reference: string, note = ""): Promise<LedgerOutcome> {
    const row = topUpRow({ userId, amount, reference: topUpLedgerReference(userId, reference) });
    return this.transaction(async (trx) => {
      if (!(await insertTopUp(trx, row, note))) return NOT_APPLIED;
      this.observe(trx, { kind: row.kind, amount: row.amount });
      return closed(row);
    });
  }

  entries(userId: number, options: { limit: number; beforeId?: number }) {
    return ledgerEntries(this.db, userId, options);
  }

  /** Sum of all ledger rows of a user: equals the balance when the books are right. */
  ledgerSum(userId: number): Promise<number> {
    return ledgerSumOf(this.db, userId);
  }
}
