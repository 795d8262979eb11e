import { unixNow } from "../../core/ids.js";
import {
  type ClosingOutcome,
  type ClosingRow,
  closed,
  excessAfterShortTry,
  excessTakenAtOnce,
  NOT_APPLIED,
  type OpenCharge,
  openCharge,
  refundRow,
  refusedHold,
  settledAmount,
  settlementPlan,
  settleRow,
} from "../../core/ledger/charge-rules.js";
import type { HoldInput, HoldRefusal } from "../ledger-engine.js";
import { BatchBalances, GIVE_TOKEN_SQL, GIVE_USER_SQL, TAKE_TOKEN_SQL, TAKE_USER_SQL } from "./balances.js";
import type { SqliteConnection, SqliteStatement } from "./connection.js";
import type { GroupCommit } from "./group-commit.js";

/**
 * The ledger's stand-alone operations (a charge, a settlement, a refund) as synchronous functions
 * over prepared statements, run as plain operations of the store's group commit (no savepoint of
 * their own: when one throws, the group commit runs its batch again with one; see GroupCommit).
 * The rules are those of `core/ledger/charge-rules.ts`, as in the in-transaction form
 * (ledger-steps.ts); the caller must hold the store's only connection while one runs (see
 * SqliteLedgerEngine), so nothing interleaves with it.
 */
export class SqliteLedger {
  private readonly chargeUser: SqliteStatement;
  private readonly chargeToken: SqliteStatement;
  private readonly insertCharge: SqliteStatement;
  private readonly insertOpen: SqliteStatement;
  private readonly closeOpen: SqliteStatement;
  private readonly markUncollected: SqliteStatement;
  private readonly insertClosing: SqliteStatement;
  private readonly userRoom: SqliteStatement;
  private readonly tokenRoom: SqliteStatement;
  private readonly moveUser: SqliteStatement;
  private readonly moveToken: SqliteStatement;
  private readonly noteSeen: SqliteStatement;
  /**
   * Opens a charge. Returns "user" when the user's balance refuses the hold, before anything is
   * written (the common refusal, kept off the group commit's second run), and "token" when the
   * token's limit refuses it and the user's side could be given back in memory (see
   * BatchBalances); otherwise a hold the token's limit refuses throws, since the user's side was
   * written by then.
   */
  readonly charge: (input: HoldInput) => HoldRefusal | null;
  /** The balances of the group commit's batches, when the ledger runs in one. */
  private readonly balances: BatchBalances | null;
  readonly refund: (reference: string, note: string) => ClosingOutcome;
  readonly settle: (reference: string, actual: number, note: string) => ClosingOutcome;

  /** @param commits the group commit the operations run in: its batches then move balances once per row (see BatchBalances). */
  constructor(
    readonly db: SqliteConnection,
    commits?: GroupCommit,
  ) {
    this.balances = commits ? BatchBalances.of(db, commits) : null;
    this.chargeUser = db.prepare(TAKE_USER_SQL);
    this.chargeToken = db.prepare(TAKE_TOKEN_SQL);
    this.insertCharge = db.prepare(
      "insert into ledger (user_id, token_id, kind, amount, reference, note, created_at) values (?, ?, 'charge', ?, ?, ?, ?)",
    );
    this.insertOpen = db.prepare(
      "insert into charges (reference, user_id, token_id, state, held, close_by, instance, created_at) values (?, ?, ?, 'open', ?, ?, ?, ?)",
    );
    this.closeOpen = db.prepare(
      "update charges set state = ?, settled = ?, close_reason = ?, closed_at = ? where reference = ? and state = 'open' returning user_id, token_id, held",
    );
    this.markUncollected = db.prepare("update charges set uncollected = ?, settled = ? where reference = ?");
    this.insertClosing = db.prepare(
      "insert into ledger (user_id, token_id, kind, amount, reference, note, created_at) values (?, ?, ?, ?, ?, ?, ?) on conflict (reference, kind) do nothing",
    );
    this.userRoom = db.prepare("select quota, credit_line from users where id = ?");
    this.tokenRoom = db.prepare("select quota_limit, used_quota from tokens where id = ?");
    this.moveUser = db.prepare(GIVE_USER_SQL);
    this.moveToken = db.prepare(GIVE_TOKEN_SQL);
    this.noteSeen = db.prepare("update charges set seen = ?, close_by = ? where reference = ? and state = 'open'");

    this.charge = (input: HoldInput) => {
      const now = unixNow();
      const opening = openCharge(input);
      const { take, row } = opening;
      const balances = this.balances;
      if (take && balances?.inBatch) {
        const held = balances.holdsUser(take.userId);
        if (!balances.takeUser(take.userId, take.amount, now)) return "user";
        if (take.tokenId !== null && !balances.takeToken(take.tokenId, take.amount, now)) {
          if (!held) throw refusedHold("token");
          balances.untakeUser(take.userId, take.amount);
          return "token";
        }
      } else if (take) {
        if (this.chargeUser.run(take.amount, take.amount, now, take.userId, take.amount).changes !== 1) {
          return "user";
        }
        if (take.tokenId !== null && this.chargeToken.run(take.amount, now, take.tokenId, take.amount).changes !== 1) {
          throw refusedHold("token");
        }
      }
      this.insertCharge.run(row.userId, row.tokenId, row.amount, row.reference, input.note, now);
      this.insertOpen.run(row.reference, row.userId, row.tokenId, opening.held, input.closeBy, input.instance, now);
      return null;
    };
    this.refund = (reference: string, note: string) => {
      const charge = this.close(reference, "refunded", null, note);
      if (!charge) return NOT_APPLIED;
      const row = refundRow(charge);
      this.write(row, reference, note);
      return closed(row);
    };
    this.settle = (reference: string, actual: number, note: string) => {
      const charge = this.close(reference, "settled", actual, note);
      if (!charge) return NOT_APPLIED;
      const plan = settlementPlan(charge, actual);
      if (plan.within) {
        const row = settleRow(charge, plan);
        this.write(row, reference, note);
        return closed(row);
      }
      const { collected, uncollected } = this.collect(charge, plan.excess);
      const row = settleRow(charge, plan, collected);
      this.insertClosing.run(row.userId, row.tokenId, row.kind, row.amount, reference, note, unixNow());
      if (uncollected > 0) this.markUncollected.run(uncollected, settledAmount(actual, uncollected), reference);
      return closed(row, uncollected);
    };
  }

  /** Records the usage a running call has produced so far, and keeps its charge open until `closeBy`. */
  noteUsage(reference: string, seen: number, closeBy: number): void {
    this.noteSeen.run(seen, closeBy, reference);
  }

  /** Open -> `state`, once: the charge as it was, or null when it was not open. */
  private close(reference: string, state: string, settled: number | null, reason: string): OpenCharge | null {
    const row = this.closeOpen.get(state, settled, reason.slice(0, 200), unixNow(), reference) as
      | { user_id: number; token_id: number | null; held: number }
      | undefined;
    if (!row) return null;
    return {
      userId: Number(row.user_id),
      tokenId: row.token_id === null ? null : Number(row.token_id),
      held: row.held,
    };
  }

  /** Writes a closing row and moves the balance by its amount (a give-back). */
  private write(row: ClosingRow, reference: string, note: string) {
    this.insertClosing.run(row.userId, row.tokenId, row.kind, row.amount, reference, note, unixNow());
    if (row.amount === 0) return;
    const now = unixNow();
    const balances = this.balances;
    if (balances?.inBatch) {
      balances.moveUser(row.userId, row.amount, now);
      if (row.tokenId !== null) balances.moveToken(row.tokenId, row.amount, now);
      return;
    }
    this.moveUser.run(row.amount, row.amount, now, row.userId);
    if (row.tokenId !== null) this.moveToken.run(row.amount, now, row.tokenId);
  }

  /**
   * Takes an excess above the hold: in one conditional statement per row when the room is there
   * (the usual case), else as much as the credit line and the token's limit leave. SQLite runs
   * one writer, so the rows read here are the rows the moves below change.
   */
  private collect(charge: OpenCharge, excess: number): { collected: number; uncollected: number } {
    // The statements below read and move the rows themselves.
    if (this.balances?.inBatch) this.balances.flush();
    const now = unixNow();
    const userTaken = this.chargeUser.run(excess, excess, now, charge.userId, excess).changes === 1;
    const tokenTaken =
      userTaken && (charge.tokenId === null || this.chargeToken.run(excess, now, charge.tokenId, excess).changes === 1);
    if (excessTakenAtOnce({ userTaken, tokenTaken })) return { collected: excess, uncollected: 0 };
    const user = this.userRoom.get(charge.userId) as { quota: number; credit_line: number };
    const token =
      charge.tokenId === null
        ? undefined
        : (this.tokenRoom.get(charge.tokenId) as { quota_limit: number | null; used_quota: number } | undefined);
    const outcome = excessAfterShortTry(excess, userTaken, {
      quota: Number(user.quota),
      creditLine: Number(user.credit_line),
      tokenRemaining:
        token?.quota_limit === null || token === undefined
          ? null
          : Number(token.quota_limit) - Number(token.used_quota),
    });
    this.moveUser.run(outcome.userMove, outcome.userMove, now, charge.userId);
    if (charge.tokenId !== null) this.moveToken.run(outcome.tokenMove, now, charge.tokenId);
    return outcome;
  }
}
