import { type Kysely, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import { GatewayError } from "../errors.js";
import type { Store } from "./database.js";
import type { GroupCommit } from "./group-commit.js";
import type { Database } from "./schema.js";
import { netOfReference, SqliteLedger } from "./sqlite-ledger.js";
import { topUpLedgerReference } from "./top-up-reference.js";

export type LedgerKind = "charge" | "refund" | "settle" | "topup" | "adjust";
export type Executor = Kysely<Database> | Transaction<Database>;

export interface ChargeInput {
  userId: number;
  tokenId: number | null;
  amount: number;
  /** Unique per charged thing: `task:<id>`, `image:<request id>`, `content:<request id>`. */
  reference: string;
  note?: string;
}

export interface LedgerOutcome {
  /** False when this (reference, kind) had already been applied: nothing changed. */
  applied: boolean;
  /** Signed amount added to the balance (0 when not applied). */
  amount: number;
}

/** One committed movement of quota, as an observer (metrics) hears it. */
export interface LedgerMovement {
  kind: LedgerKind;
  /** Signed amount added to the balance: negative for a charge. */
  amount: number;
}
export type LedgerObserver = (movement: LedgerMovement) => void;

/**
 * The money ledger. Every balance change is one append-only row written in the same transaction
 * as the balance update; a unique key on (reference, kind) makes refunds and settlements happen at
 * most once whatever retries, crashes or parallel workers do.
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
  ) {}

  /** The ledger of a store: on SQLite with its synchronous fast path. */
  static forStore(store: Store, observer?: LedgerObserver): Ledger {
    const fastPath =
      store.sqlite && store.commits ? { ledger: new SqliteLedger(store.sqlite), commits: store.commits } : undefined;
    return new Ledger(store.db, store.dialect === "postgres", observer, fastPath);
  }

  /** The SQLite operations, or null where the query builder does the work (PostgreSQL). */
  private get sqlite(): SqliteLedger | null {
    return this.fastPath?.ledger ?? null;
  }

  /** Runs a stand-alone SQLite operation in the store's next group commit. */
  private committed<T>(operation: () => T): Promise<T> {
    return (this.fastPath as { commits: GroupCommit }).commits.run(operation);
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

  /**
   * Atomic conditional charge: the balance and the token's limit are checked and decremented in
   * the same statement, so a charge larger than what is left changes nothing.
   */
  async chargeIn(trx: Executor, input: ChargeInput): Promise<void> {
    if (!Number.isSafeInteger(input.amount) || input.amount < 0) {
      throw new Error(`charge amount must be a non-negative integer, got ${input.amount}`);
    }
    const now = unixNow();
    if (input.amount > 0) {
      const user = await trx
        .updateTable("users")
        .set({
          quota: sql`quota - ${input.amount}`,
          used_quota: sql`used_quota + ${input.amount}`,
          updated_at: now,
        })
        .where("id", "=", input.userId)
        .where("quota", ">=", input.amount)
        .executeTakeFirst();
      if (Number(user.numUpdatedRows) !== 1) throw new GatewayError("GW_ERR_INSUFFICIENT_QUOTA");
      if (input.tokenId !== null) {
        const token = await trx
          .updateTable("tokens")
          .set({ used_quota: sql`used_quota + ${input.amount}`, updated_at: now })
          .where("id", "=", input.tokenId)
          .where((eb) => eb.or([eb("quota_limit", "is", null), eb(sql`quota_limit - used_quota`, ">=", input.amount)]))
          .executeTakeFirst();
        if (Number(token.numUpdatedRows) !== 1) throw new GatewayError("GW_ERR_TOKEN_QUOTA_EXCEEDED");
      }
    }
    await trx
      .insertInto("ledger")
      .values({
        user_id: input.userId,
        token_id: input.tokenId,
        kind: "charge",
        amount: -input.amount,
        reference: input.reference,
        note: input.note ?? "",
        created_at: now,
      })
      .execute();
    this.observe(trx, { kind: "charge", amount: -input.amount });
  }

  /** Charges in a transaction of its own. */
  async charge(input: ChargeInput): Promise<void> {
    const fast = this.sqlite;
    if (!fast) return this.transaction((trx) => this.chargeIn(trx, input));
    if (!Number.isSafeInteger(input.amount) || input.amount < 0) {
      throw new Error(`charge amount must be a non-negative integer, got ${input.amount}`);
    }
    await this.committed(() => fast.charge({ ...input, note: input.note ?? "" }));
    if (input.amount !== 0) this.observer?.({ kind: "charge", amount: -input.amount });
  }

  /** What the reference has cost so far (charge plus any settlement), as a positive number. */
  private async netCharged(trx: Executor, reference: string) {
    // On PostgreSQL the charge row is locked first, so that a refund and a settlement of one
    // reference run one after the other; the rows are then read by a second statement, whose
    // fresh snapshot sees what the other transaction committed while this one waited. SQLite runs
    // one write transaction at a time, so one read is enough there.
    if (this.lockRows) {
      await trx
        .selectFrom("ledger")
        .select("id")
        .where("reference", "=", reference)
        .where("kind", "=", "charge")
        .forUpdate()
        .execute();
    }
    const rows = await trx
      .selectFrom("ledger")
      .select(["kind", "user_id", "token_id", "amount"])
      .where("reference", "=", reference)
      .where("kind", "in", ["charge", "settle", "refund"])
      .execute();
    return netOfReference(rows);
  }

  /** Inserts the row unless (reference, kind) exists; true when this call inserted it. */
  private async appendOnce(
    trx: Executor,
    row: {
      user_id: number;
      token_id: number | null;
      kind: LedgerKind;
      amount: number;
      reference: string;
      note: string;
    },
  ): Promise<boolean> {
    const inserted = await trx
      .insertInto("ledger")
      .values({ ...row, created_at: unixNow() })
      .onConflict((oc) => oc.columns(["reference", "kind"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    return inserted !== undefined;
  }

  private async moveBalance(trx: Executor, userId: number, tokenId: number | null, amount: number) {
    if (amount === 0) return;
    const now = unixNow();
    await trx
      .updateTable("users")
      .set({ quota: sql`quota + ${amount}`, used_quota: sql`used_quota - ${amount}`, updated_at: now })
      .where("id", "=", userId)
      .execute();
    if (tokenId !== null) {
      await trx
        .updateTable("tokens")
        .set({ used_quota: sql`used_quota - ${amount}`, updated_at: now })
        .where("id", "=", tokenId)
        .execute();
    }
  }

  /** Gives back everything the reference has cost. At most once per reference. */
  async refundIn(trx: Executor, reference: string, note = ""): Promise<LedgerOutcome> {
    const net = await this.netCharged(trx, reference);
    if (!net) return { applied: false, amount: 0 };
    const applied = await this.appendOnce(trx, {
      user_id: net.userId,
      token_id: net.tokenId,
      kind: "refund",
      amount: net.net,
      reference,
      note,
    });
    if (!applied) return { applied: false, amount: 0 };
    await this.moveBalance(trx, net.userId, net.tokenId, net.net);
    this.observe(trx, { kind: "refund", amount: net.net });
    return { applied: true, amount: net.net };
  }

  async refund(reference: string, note = ""): Promise<LedgerOutcome> {
    const fast = this.sqlite;
    if (!fast) return this.transaction((trx) => this.refundIn(trx, reference, note));
    const outcome = await this.committed(() => fast.refund(reference, note));
    if (outcome.applied && outcome.amount !== 0) this.observer?.({ kind: "refund", amount: outcome.amount });
    return outcome;
  }

  /**
   * Settles a pre-charged reference to what it really cost: the difference is given back (or
   * taken, when the real cost exceeds the estimate). At most once per reference.
   */
  async settleIn(trx: Executor, reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    if (!Number.isSafeInteger(actualAmount) || actualAmount < 0) {
      throw new Error(`settled amount must be a non-negative integer, got ${actualAmount}`);
    }
    const net = await this.netCharged(trx, reference);
    if (!net || net.refunded) return { applied: false, amount: 0 };
    const delta = net.charged - actualAmount;
    const applied = await this.appendOnce(trx, {
      user_id: net.userId,
      token_id: net.tokenId,
      kind: "settle",
      amount: delta,
      reference,
      note,
    });
    if (!applied) return { applied: false, amount: 0 };
    await this.moveBalance(trx, net.userId, net.tokenId, delta);
    this.observe(trx, { kind: "settle", amount: delta });
    return { applied: true, amount: delta };
  }

  async settle(reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    const fast = this.sqlite;
    if (!fast) return this.transaction((trx) => this.settleIn(trx, reference, actualAmount, note));
    if (!Number.isSafeInteger(actualAmount) || actualAmount < 0) {
      throw new Error(`settled amount must be a non-negative integer, got ${actualAmount}`);
    }
    const outcome = await this.committed(() => fast.settle(reference, actualAmount, note));
    if (outcome.applied && outcome.amount !== 0) this.observer?.({ kind: "settle", amount: outcome.amount });
    return outcome;
  }

  /** Adds quota to a user (operator top-up). Idempotent by reference, per user. */
  async topUp(userId: number, amount: number, reference: string, note = ""): Promise<LedgerOutcome> {
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      throw new GatewayError("GW_ERR_VALIDATION", "amount must be a positive integer", { param: "amount" });
    }
    return this.transaction(async (trx) => {
      const applied = await this.appendOnce(trx, {
        user_id: userId,
        token_id: null,
        kind: "topup",
        amount,
        reference: topUpLedgerReference(userId, reference),
        note,
      });
      if (!applied) return { applied: false, amount: 0 };
      await trx
        .updateTable("users")
        .set({ quota: sql`quota + ${amount}`, updated_at: unixNow() })
        .where("id", "=", userId)
        .execute();
      this.observe(trx, { kind: "topup", amount });
      return { applied: true, amount };
    });
  }

  async entries(userId: number, options: { limit: number; beforeId?: number }) {
    let q = this.db.selectFrom("ledger").selectAll().where("user_id", "=", userId);
    if (options.beforeId !== undefined) q = q.where("id", "<", options.beforeId);
    return q.orderBy("id", "desc").limit(options.limit).execute();
  }

  /** Sum of all ledger rows of a user: equals the balance when the books are right. */
  async ledgerSum(userId: number): Promise<number> {
    const row = await this.db
      .selectFrom("ledger")
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("amount"), sql<number>`0`).as("total"))
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }
}
