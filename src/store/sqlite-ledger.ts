import { unixNow } from "../core/ids.js";
import { GatewayError } from "../errors.js";
import type { SqliteConnection, SqliteStatement } from "./sqlite-connection.js";

/** A reference's ledger rows as both ledger paths read them. */
export interface ReferenceRow {
  kind: string;
  user_id: number;
  token_id: number | null;
  amount: number;
}

/** What a reference has cost so far, from its charge, settle and refund rows; null without a charge. */
export function netOfReference(rows: readonly ReferenceRow[]) {
  const charge = rows.find((r) => r.kind === "charge");
  if (!charge) return null;
  const charged = -Number(charge.amount);
  const net = charged - rows.reduce((sum, r) => (r.kind === "charge" ? sum : sum + Number(r.amount)), 0);
  return {
    userId: Number(charge.user_id),
    tokenId: charge.token_id === null ? null : Number(charge.token_id),
    charged,
    net,
    refunded: rows.some((r) => r.kind === "refund"),
  };
}

/**
 * The ledger's stand-alone operations (a charge, a refund, a settlement, each in its own
 * transaction) as synchronous SQLite transactions over prepared statements. Same statements, same
 * rules as the query-builder path in ledger.ts, at a fraction of the cost; the caller must hold
 * the store's only connection while one runs (see `Ledger`), so nothing interleaves with it.
 */
export class SqliteLedger {
  private readonly chargeUser: SqliteStatement;
  private readonly chargeToken: SqliteStatement;
  private readonly insertCharge: SqliteStatement;
  private readonly insertOnce: SqliteStatement;
  private readonly referenceRows: SqliteStatement;
  private readonly moveUser: SqliteStatement;
  private readonly moveToken: SqliteStatement;
  readonly charge: (input: {
    userId: number;
    tokenId: number | null;
    amount: number;
    reference: string;
    note: string;
  }) => void;
  readonly refund: (reference: string, note: string) => { applied: boolean; amount: number };
  readonly settle: (reference: string, actual: number, note: string) => { applied: boolean; amount: number };

  constructor(readonly db: SqliteConnection) {
    this.chargeUser = db.prepare(
      "update users set quota = quota - ?, used_quota = used_quota + ?, updated_at = ? where id = ? and quota >= ?",
    );
    this.chargeToken = db.prepare(
      "update tokens set used_quota = used_quota + ?, updated_at = ? where id = ? and (quota_limit is null or quota_limit - used_quota >= ?)",
    );
    this.insertCharge = db.prepare(
      "insert into ledger (user_id, token_id, kind, amount, reference, note, created_at) values (?, ?, 'charge', ?, ?, ?, ?)",
    );
    this.insertOnce = db.prepare(
      "insert into ledger (user_id, token_id, kind, amount, reference, note, created_at) values (?, ?, ?, ?, ?, ?, ?) on conflict (reference, kind) do nothing returning id",
    );
    this.referenceRows = db.prepare(
      "select kind, user_id, token_id, amount from ledger where reference = ? and kind in ('charge', 'settle', 'refund')",
    );
    this.moveUser = db.prepare(
      "update users set quota = quota + ?, used_quota = used_quota - ?, updated_at = ? where id = ?",
    );
    this.moveToken = db.prepare("update tokens set used_quota = used_quota - ?, updated_at = ? where id = ?");

    this.charge = db.transaction((input) => {
      const now = unixNow();
      if (input.amount > 0) {
        if (this.chargeUser.run(input.amount, input.amount, now, input.userId, input.amount).changes !== 1) {
          throw new GatewayError("GW_ERR_INSUFFICIENT_QUOTA");
        }
        if (
          input.tokenId !== null &&
          this.chargeToken.run(input.amount, now, input.tokenId, input.amount).changes !== 1
        ) {
          throw new GatewayError("GW_ERR_TOKEN_QUOTA_EXCEEDED");
        }
      }
      this.insertCharge.run(input.userId, input.tokenId, -input.amount, input.reference, input.note, now);
    });
    this.refund = db.transaction((reference: string, note: string) => {
      const net = netOfReference(this.referenceRows.all(reference) as ReferenceRow[]);
      if (!net) return { applied: false, amount: 0 };
      if (!this.append(net.userId, net.tokenId, "refund", net.net, reference, note))
        return { applied: false, amount: 0 };
      this.move(net.userId, net.tokenId, net.net);
      return { applied: true, amount: net.net };
    });
    this.settle = db.transaction((reference: string, actual: number, note: string) => {
      const net = netOfReference(this.referenceRows.all(reference) as ReferenceRow[]);
      if (!net || net.refunded) return { applied: false, amount: 0 };
      const delta = net.charged - actual;
      if (!this.append(net.userId, net.tokenId, "settle", delta, reference, note)) return { applied: false, amount: 0 };
      this.move(net.userId, net.tokenId, delta);
      return { applied: true, amount: delta };
    });
  }

  private append(
    userId: number,
    tokenId: number | null,
    kind: string,
    amount: number,
    reference: string,
    note: string,
  ) {
    return this.insertOnce.get(userId, tokenId, kind, amount, reference, note, unixNow()) !== undefined;
  }

  private move(userId: number, tokenId: number | null, amount: number) {
    if (amount === 0) return;
    const now = unixNow();
    this.moveUser.run(amount, amount, now, userId);
    if (tokenId !== null) this.moveToken.run(amount, now, tokenId);
  }
}
