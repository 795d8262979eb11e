import { type Kysely, sql, type Transaction } from "kysely";
import { unixNow } from "../core/ids.js";
import { GatewayError } from "../errors.js";
import type { Database } from "./schema.js";

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
  ) {}

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
  charge(input: ChargeInput): Promise<void> {
    return this.transaction((trx) => this.chargeIn(trx, input));
  }

  /** What the reference has cost so far (charge plus any settlement), as a positive number. */
  private async netCharged(trx: Executor, reference: string) {
    // On PostgreSQL the charge row is locked so that a refund and a settlement of one reference
    // cannot both read the same net amount; SQLite runs one write transaction at a time anyway.
    let chargeQuery = trx
      .selectFrom("ledger")
      .select(["user_id", "token_id", "amount"])
      .where("reference", "=", reference)
      .where("kind", "=", "charge");
    if (this.lockRows) chargeQuery = chargeQuery.forUpdate();
    const charge = await chargeQuery.executeTakeFirst();
    if (!charge) return null;
    const rows = await trx
      .selectFrom("ledger")
      .select(["kind", "amount"])
      .where("reference", "=", reference)
      .where("kind", "in", ["settle", "refund"])
      .execute();
    const charged = -Number(charge.amount);
    const net = charged - rows.reduce((sum, r) => sum + Number(r.amount), 0);
    return {
      userId: Number(charge.user_id),
      tokenId: charge.token_id === null ? null : Number(charge.token_id),
      charged,
      net,
      refunded: rows.some((r) => r.kind === "refund"),
    };
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

  refund(reference: string, note = ""): Promise<LedgerOutcome> {
    return this.transaction((trx) => this.refundIn(trx, reference, note));
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

  settle(reference: string, actualAmount: number, note = ""): Promise<LedgerOutcome> {
    return this.transaction((trx) => this.settleIn(trx, reference, actualAmount, note));
  }

  /** Adds quota to a user (operator top-up). Idempotent by reference. */
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
        reference,
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
