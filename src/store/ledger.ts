import type { Transaction } from "kysely";
import {
  assertLedgerAmount,
  type ClosingOutcome,
  closed,
  NOT_APPLIED,
  openCharge,
  refusedHold,
  topUpRow,
} from "../core/ledger/charge-rules.js";
import type { ChargeInput } from "../core/metering/ports.js";
import type { Store } from "./database.js";
import type { HoldInput, HoldWith, LedgerEngine } from "./ledger-engine.js";
import { type Executor, insertTopUp, ledgerEntries, ledgerSumOf } from "./ledger-statements.js";
import { holdStep, refundStep, settleStep } from "./ledger-steps.js";
import { PgLedgerEngine } from "./postgres/ledger-engine.js";
import type { Database } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";
import { SqliteLedgerEngine } from "./sqlite/ledger-engine.js";
import { topUpLedgerReference } from "./top-up-reference.js";

export type LedgerKind = "charge" | "refund" | "settle" | "topup" | "adjust";
export type { Executor };

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
 * refunded) by a compare-and-set on its state. The ledger checks the amounts, fills a hold in and
 * tells the observer; its engine, one per dialect and chosen once (`forStore`), does the writes
 * (see ledger-engine.ts), by the rules of `core/ledger/charge-rules.ts`.
 */
export class Ledger {
  constructor(
    private readonly engine: LedgerEngine,
    private readonly observer?: LedgerObserver,
    readonly origin: ChargeOrigin = DEFAULT_ORIGIN,
  ) {}

  /** The ledger of a store, with the engine of its dialect. */
  static forStore(store: Store, observer?: LedgerObserver, origin?: ChargeOrigin): Ledger {
    return new Ledger(engineOf(store), observer, origin);
  }

  /** Movements written inside a transaction opened by `transaction`, told once it commits. */
  private readonly pending = new WeakMap<object, LedgerMovement[]>();

  /** Runs `fn` in one transaction. The observer hears its movements only after the commit. */
  async transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const movements: LedgerMovement[] = [];
    const result = await this.engine.inTransaction((trx) => {
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

  /** Tells the observer of a hold of `amount` committed outside the ledger's transactions. */
  private observeHold(amount: number): void {
    if (amount !== 0) this.observer?.({ kind: "charge", amount: -amount });
  }

  /** Tells the observer of a closing committed outside the ledger's transactions. */
  private observeClosing(kind: "refund" | "settle", outcome: LedgerOutcome): LedgerOutcome {
    if (outcome.applied && outcome.amount !== 0) this.observer?.({ kind, amount: outcome.amount });
    return outcome;
  }

  private opening(input: ChargeInput): HoldInput {
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
   * Atomic conditional charge (a hold) inside the caller's transaction: the balance (down to
   * minus the credit line) and the token's limit are checked and decremented in one statement
   * each, so a charge larger than what is left changes nothing. Opens the charge's lifecycle row
   * in the same transaction.
   */
  async chargeIn(trx: Executor, input: ChargeInput): Promise<void> {
    const open = this.opening(input);
    const opening = openCharge(open);
    await holdStep(trx, opening, open);
    this.observe(trx, { kind: "charge", amount: opening.row.amount });
  }

  /** Charges in a transaction of its own (in the engine's group commit). */
  async charge(input: ChargeInput): Promise<void> {
    const open = this.opening(input);
    const refusedBy = await this.engine.hold(open);
    if (refusedBy) throw refusedHold(refusedBy);
    this.observeHold(open.amount);
  }

  /**
   * Charges `input` together with the writes of `forms` (each engine runs its own form of them):
   * the charge commits with them, or neither does.
   */
  async chargeWith<T>(input: ChargeInput, forms: HoldWith<T>): Promise<T> {
    const open = this.opening(input);
    const result = await this.engine.holdWith(open, forms);
    this.observeHold(open.amount);
    return result;
  }

  /** Writes in the store's next commit: SQLite's synchronous form in its group commit, elsewhere `otherwise`. */
  inCommit<T>(synchronous: (db: SqliteConnection) => T, otherwise: () => Promise<T>): Promise<T> {
    return this.engine.inCommit(synchronous, otherwise);
  }

  /** Gives back everything an open charge holds and closes it as refunded. At most once. */
  async refundIn(trx: Executor, reference: string, note = ""): Promise<LedgerOutcome> {
    const outcome = await refundStep(trx, reference, note);
    if (outcome.applied) this.observe(trx, { kind: "refund", amount: outcome.amount });
    return outcome;
  }

  async refund(reference: string, note = ""): Promise<LedgerOutcome> {
    return this.observeClosing("refund", await this.engine.refund(reference, note));
  }

  /**
   * Settles an open charge to what it really cost and closes it: the difference within the hold
   * is given back; a cost above the hold is taken only down to minus the credit line (and within
   * the token's limit), the rest recorded on the charge as uncollected. At most once.
   */
  async settleIn(trx: Executor, reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    assertLedgerAmount(actualAmount, "settled amount");
    const outcome = await settleStep(trx, reference, actualAmount, note, this.engine.locksRows);
    if (outcome.applied) this.observe(trx, { kind: "settle", amount: outcome.amount });
    return outcome;
  }

  async settle(reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    assertLedgerAmount(actualAmount, "settled amount");
    return this.observeClosing("settle", await this.engine.settle(reference, actualAmount, note));
  }

  /**
   * Records on an open charge the cost of the usage seen so far (what the reaper settles to should
   * its opener die) and keeps it open until at least `closeBy`. One statement, not on the balance.
   */
  async noteUsage(reference: string, seen: number, closeBy: number): Promise<void> {
    assertLedgerAmount(seen, "seen amount");
    return this.engine.noteUsage(reference, seen, closeBy);
  }

  /** Adds quota to a user (operator top-up). Idempotent by reference, per user. */
  async topUp(userId: number, amount: number, reference: string, note = ""): Promise<LedgerOutcome> {
    const row = topUpRow({ userId, amount, reference: topUpLedgerReference(userId, reference) });
    if (!(await this.engine.topUp(row, note))) return NOT_APPLIED;
    if (row.amount !== 0) this.observer?.({ kind: row.kind, amount: row.amount });
    return closed(row);
  }

  /**
   * Credits a user inside the caller's transaction, its ledger row a top-up under `reference` as
   * given (unique among top-ups of every user: a redemption's code). False, having written
   * nothing, when that reference was credited before.
   */
  async topUpIn(
    trx: Executor,
    input: { userId: number; tokenId: number | null; amount: number; reference: string; note: string },
  ): Promise<boolean> {
    const row = { ...topUpRow(input), tokenId: input.tokenId };
    if (!(await insertTopUp(trx, row, input.note))) return false;
    this.observe(trx, { kind: row.kind, amount: row.amount });
    return true;
  }

  entries(userId: number, options: { limit: number; beforeId?: number }) {
    return ledgerEntries(this.engine.db, userId, options);
  }

  /** Sum of all ledger rows of a user: equals the balance when the books are right. */
  ledgerSum(userId: number): Promise<number> {
    return ledgerSumOf(this.engine.db, userId);
  }
}

/** The engine of the store's dialect. */
function engineOf(store: Store): LedgerEngine {
  if (store.dialect === "postgres") return new PgLedgerEngine(store.db, store.ledgerPool);
  const { sqlite, commits } = store;
  if (!sqlite || !commits) throw new Error("a SQLite store without its connection and group commit");
  return new SqliteLedgerEngine({ db: store.db, sqlite, commits });
}
