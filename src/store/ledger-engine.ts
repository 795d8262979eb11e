import type { Kysely, Transaction } from "kysely";
import type { ChargeOpening, ClosingOutcome, LedgerRow } from "../core/ledger/charge-rules.js";
import { insertTopUp } from "./ledger-statements.js";
import type { OpeningMeta } from "./ledger-steps.js";
import type { Database } from "./schema.js";
import type { SqliteConnection } from "./sqlite/connection.js";

/** A hold as an engine takes it: the charge, with its note, its close-by time and its opener. */
export interface HoldInput extends OpeningMeta {
  userId: number;
  tokenId: number | null;
  amount: number;
  reference: string;
}

/** Whose limit refused a hold: the user's balance (with its credit line) or the token's. */
export type HoldRefusal = "user" | "token";

/**
 * A hold taken with other writes that commit or fail with it (a task's submit), in each engine's
 * form of it; each engine runs one of them, and the last where the first was refused.
 */
export interface HoldWith<T> {
  /** SQLite: synchronous, in the store's group commit; `hold()` takes the charge, and throws when it is refused. */
  synchronous(db: SqliteConnection, hold: () => void): T;
  /**
   * PostgreSQL: one statement, its own transaction, writing the hold's rows (`opening`, `meta`)
   * with the rest. Refused, it throws PostgreSQL's error having written nothing.
   */
  oneStatement(opening: ChargeOpening, meta: OpeningMeta): Promise<T>;
  /** Where the one statement was refused: statement by statement, which names the refusal. */
  inTransaction(trx: Transaction<Database>, hold: () => Promise<void>): Promise<T>;
}

/**
 * How the ledger's operations are carried out on one store: one engine per dialect, chosen once
 * when the ledger is made (`Ledger.forStore`). Both run the money rules of
 * `core/ledger/charge-rules.ts`, their takes guarded by the conditions of `ledger-guards.ts`, and
 * share the in-transaction form (`ledger-steps.ts`) for the operations inside larger
 * transactions. The stand-alone operations are each engine's hot path: SQLite's synchronous
 * prepared statements in its group commit (`sqlite/ledger-engine.ts`), PostgreSQL's pipelined
 * batches (`postgres/ledger-engine.ts`). An engine does the writes; the `Ledger` checks the
 * amounts, fills a hold in and tells the observer.
 */
export interface LedgerEngine {
  /** The store's query builder (the ledger's reads). */
  readonly db: Kysely<Database>;
  /** Whether the in-transaction form locks the rows it reads (`FOR UPDATE`: PostgreSQL). */
  readonly locksRows: boolean;
  /** Opens a charge, taking its hold; a refusal is answered (not thrown) when nothing was written. */
  hold(input: HoldInput): Promise<HoldRefusal | null | undefined>;
  settle(reference: string, actual: number, note: string): Promise<ClosingOutcome>;
  refund(reference: string, note: string): Promise<ClosingOutcome>;
  /** Records the usage seen on an open charge and keeps it open until `closeBy`. */
  noteUsage(reference: string, seen: number, closeBy: number): Promise<void>;
  /** Writes a top-up row and credits the user; false when its reference was there already. */
  topUp(row: LedgerRow, note: string): Promise<boolean>;
  /** Runs `fn` in one transaction of the query builder. */
  inTransaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** A hold with the writes that go with it (see HoldWith). */
  holdWith<T>(input: HoldInput, forms: HoldWith<T>): Promise<T>;
  /**
   * Writes in the store's next commit: on SQLite `synchronous`, in the group commit (a savepoint
   * of it); elsewhere `otherwise`.
   */
  inCommit<T>(synchronous: (db: SqliteConnection) => T, otherwise: () => Promise<T>): Promise<T>;
}

/** The operations both engines run on the query builder alike. */
export abstract class QueryBuilderForms {
  constructor(readonly db: Kysely<Database>) {}

  inTransaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  topUp(row: LedgerRow, note: string): Promise<boolean> {
    return this.inTransaction((trx) => insertTopUp(trx, row, note));
  }
}
