import { unixNow } from "../../core/ids.js";
import { tokenAllows, userAllows } from "../../core/ledger/charge-rules.js";
import { tokenTakeFits, userTakeFits } from "../ledger-guards.js";
import type { SqliteConnection, SqliteStatement } from "./connection.js";
import type { GroupCommit } from "./group-commit.js";

interface UserBalance {
  quota: number;
  creditLine: number;
  /** Moves not yet written to the row. */
  quotaMove: number;
  usedMove: number;
}

interface TokenBalance {
  limit: number | null;
  used: number;
  usedMove: number;
}

interface UserRow {
  quota: number | bigint;
  credit_line: number | bigint;
}

interface TokenRow {
  quota_limit: number | bigint | null;
  used_quota: number | bigint;
}

/** Adds `amount` to a held user's balance and takes it off its usage. */
function giveBack(user: UserBalance, amount: number): void {
  user.quota += amount;
  user.quotaMove += amount;
  user.usedMove -= amount;
}

const of = new WeakMap<GroupCommit, BatchBalances>();

/**
 * A hold's takes on SQLite's rows, their conditions rendered from the hold rule's one source
 * (ledger-guards.ts; in memory, userAllows and tokenAllows). Parameters: amount, amount, time,
 * user id, amount; amount, time, token id, amount. The ledger's direct path and the batch
 * balances both use them.
 */
export const TAKE_USER_SQL = `update users set quota = quota - ?, used_quota = used_quota + ?, updated_at = ? where id = ? and ${userTakeFits("?")}`;
export const TAKE_TOKEN_SQL = `update tokens set used_quota = used_quota + ?, updated_at = ? where id = ? and ${tokenTakeFits("?")}`;
/** A give-back (parameters: amount, amount, time, user id; amount, time, token id). */
export const GIVE_USER_SQL =
  "update users set quota = quota + ?, used_quota = used_quota - ?, updated_at = ? where id = ?";
export const GIVE_TOKEN_SQL = "update tokens set used_quota = used_quota - ?, updated_at = ? where id = ?";

/**
 * The balances of users and tokens as the ledger's operations of one group-commit batch move
 * them. Under load the operations of a batch are mostly one user's (a reseller's biggest
 * customer): each used to update the user's row and the token's row once more. Now the first
 * operation of a batch to touch a row updates it as before and reads back what the checks need
 * (balance and credit line, limit and usage); the batch's later operations check and move that in
 * memory, in the order asked, and the batch writes each row's total move once, before its commit.
 * The checks are those of the conditional statements (userAllows and tokenAllows, the in-memory
 * form of TAKE_USER_SQL and TAKE_TOKEN_SQL), on the same values, since nothing else writes during
 * a batch.
 *
 * Only the batch's first, bare run does this; the guarded run (a savepoint per operation, after an
 * operation threw) and every write outside a batch go straight to the rows, as before.
 */
export class BatchBalances {
  private active = false;
  private readonly users = new Map<number, UserBalance>();
  private readonly tokens = new Map<number, TokenBalance>();
  private readonly takeUserRow: SqliteStatement;
  private readonly takeTokenRow: SqliteStatement;
  private readonly moveUserRow: SqliteStatement;
  private readonly moveTokenRow: SqliteStatement;
  private readonly writeUser: SqliteStatement;
  private readonly writeToken: SqliteStatement;

  /** The balances of the batches of `commits`, shared by every ledger on its connection. */
  static of(db: SqliteConnection, commits: GroupCommit): BatchBalances {
    let balances = of.get(commits);
    if (!balances) {
      balances = new BatchBalances(db);
      const made = balances;
      commits.addBatchHooks({
        begin: (bare) => made.begin(bare),
        end: () => made.end(),
        reset: () => made.begin(false),
      });
      of.set(commits, balances);
    }
    return balances;
  }

  private constructor(db: SqliteConnection) {
    this.takeUserRow = db.prepare(`${TAKE_USER_SQL} returning quota, credit_line`);
    this.takeTokenRow = db.prepare(`${TAKE_TOKEN_SQL} returning quota_limit, used_quota`);
    this.moveUserRow = db.prepare(`${GIVE_USER_SQL} returning quota, credit_line`);
    this.moveTokenRow = db.prepare(`${GIVE_TOKEN_SQL} returning quota_limit, used_quota`);
    this.writeUser = db.prepare(
      "update users set quota = quota + ?, used_quota = used_quota + ?, updated_at = ? where id = ?",
    );
    this.writeToken = db.prepare("update tokens set used_quota = used_quota + ?, updated_at = ? where id = ?");
  }

  /** True while a batch's bare run is under way: the ledger's moves then go through here. */
  get inBatch(): boolean {
    return this.active;
  }

  /** True when the user's balance is held here (touched earlier in this batch). */
  holdsUser(userId: number): boolean {
    return this.users.has(userId);
  }

  /** Takes `amount` from the user's balance if the credit line allows; false (nothing changed) if not. */
  takeUser(userId: number, amount: number, now: number): boolean {
    const user = this.users.get(userId);
    if (!user) {
      const row = this.takeUserRow.get(amount, amount, now, userId, amount) as UserRow | undefined;
      if (row) this.users.set(userId, userBalance(row));
      return row !== undefined;
    }
    if (!userAllows(user.quota, user.creditLine, amount)) return false;
    user.quota -= amount;
    user.quotaMove -= amount;
    user.usedMove += amount;
    return true;
  }

  /** Gives back a take of this batch held here (see holdsUser). */
  untakeUser(userId: number, amount: number): void {
    giveBack(this.users.get(userId) as UserBalance, amount);
  }

  /** Takes `amount` from the token's usage if its limit allows; false (nothing changed) if not. */
  takeToken(tokenId: number, amount: number, now: number): boolean {
    const token = this.tokens.get(tokenId);
    if (!token) {
      const row = this.takeTokenRow.get(amount, now, tokenId, amount) as TokenRow | undefined;
      if (row) this.tokens.set(tokenId, tokenBalance(row));
      return row !== undefined;
    }
    if (!tokenAllows(token.limit, token.used, amount)) return false;
    token.used += amount;
    token.usedMove += amount;
    return true;
  }

  /** Adds `amount` to the user's balance and takes it off its usage (a give-back). */
  moveUser(userId: number, amount: number, now: number): void {
    const user = this.users.get(userId);
    if (!user) {
      const row = this.moveUserRow.get(amount, amount, now, userId) as UserRow | undefined;
      if (row) this.users.set(userId, userBalance(row));
      return;
    }
    giveBack(user, amount);
  }

  /** Takes `amount` off the token's usage (a give-back). */
  moveToken(tokenId: number, amount: number, now: number): void {
    const token = this.tokens.get(tokenId);
    if (!token) {
      const row = this.moveTokenRow.get(amount, now, tokenId) as TokenRow | undefined;
      if (row) this.tokens.set(tokenId, tokenBalance(row));
      return;
    }
    token.used -= amount;
    token.usedMove -= amount;
  }

  /** Writes every move held here to its row and forgets the rows: the statements after it read the rows. */
  flush(): void {
    const now = unixNow();
    for (const [id, user] of this.users) {
      if (user.quotaMove !== 0 || user.usedMove !== 0) this.writeUser.run(user.quotaMove, user.usedMove, now, id);
    }
    for (const [id, token] of this.tokens) {
      if (token.usedMove !== 0) this.writeToken.run(token.usedMove, now, id);
    }
    this.users.clear();
    this.tokens.clear();
  }

  private begin(bare: boolean): void {
    this.users.clear();
    this.tokens.clear();
    this.active = bare;
  }

  private end(): void {
    if (this.active) this.flush();
    this.active = false;
  }
}

function userBalance(row: UserRow): UserBalance {
  return { quota: Number(row.quota), creditLine: Number(row.credit_line), quotaMove: 0, usedMove: 0 };
}

function tokenBalance(row: TokenRow): TokenBalance {
  return {
    limit: row.quota_limit === null ? null : Number(row.quota_limit),
    used: Number(row.used_quota),
    usedMove: 0,
  };
}
