import { type Kysely, sql } from "kysely";
import { unixNow } from "../core/ids.js";
import type {
  NewRedemptionCode,
  RedeemOutcome,
  RedemptionBatchRecord,
  RedemptionBatchStore,
  RedemptionCodeRecord,
  RedemptionLedger,
} from "../core/redemptions/ports.js";
import type { RedemptionRefusal } from "../core/redemptions/refusals.js";
import type { Ledger } from "./ledger.js";
import type { Database } from "./schema.js";

/** Codes inserted per statement when a batch is generated. */
const INSERT_CHUNK = 500;

/** Ends a redemption's transaction having written nothing (rolled back), saying why. */
class Refused extends Error {
  constructor(readonly reason: RedemptionRefusal) {
    super(reason);
  }
}

/**
 * Batches of redemption codes and their redemption. A code is redeemed in one transaction: its
 * row moves from `unused` to `used` by compare-and-set, the user's count for the batch rises by a
 * conditional upsert (the limit per user), and the credit is a ledger top-up whose reference
 * (`redemption:<code id>`) is unique; any refusal rolls all of it back. So of concurrent redeems
 * of one code, on any number of instances, one credits and the others are refused `used`.
 */
export class RedemptionCodes implements RedemptionBatchStore, RedemptionLedger {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: Pick<Ledger, "transaction" | "topUpIn">,
  ) {}

  private batches() {
    return this.db.selectFrom("redemption_batches as b").select((eb) => [
      "b.id",
      "b.name",
      "b.quota",
      "b.count",
      "b.per_user_limit",
      "b.expires_at",
      "b.status",
      "b.note",
      "b.exported_at",
      "b.created_at",
      eb
        .selectFrom("redemption_codes as c")
        .select((c) => c.fn.countAll<number>().as("n"))
        .whereRef("c.batch_id", "=", "b.id")
        .where("c.status", "=", "used")
        .as("used"),
    ]);
  }

  async createBatch(input: {
    name: string;
    quota: number;
    perUserLimit: number | null;
    expiresAt: number | null;
    note: string;
    codes: NewRedemptionCode[];
  }): Promise<RedemptionBatchRecord> {
    const now = unixNow();
    const id = await this.db.transaction().execute(async (trx) => {
      const batch = await trx
        .insertInto("redemption_batches")
        .values({
          name: input.name,
          quota: input.quota,
          count: input.codes.length,
          per_user_limit: input.perUserLimit,
          expires_at: input.expiresAt,
          note: input.note,
          exported_at: null,
          created_at: now,
          updated_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      for (let i = 0; i < input.codes.length; i += INSERT_CHUNK) {
        const rows = input.codes.slice(i, i + INSERT_CHUNK).map((code) => ({
          batch_id: Number(batch.id),
          code_hash: code.hash,
          shown: code.shown,
          plain: code.plain,
          user_id: null,
          redeemed_at: null,
          created_at: now,
        }));
        await trx.insertInto("redemption_codes").values(rows).execute();
      }
      return Number(batch.id);
    });
    const row = await this.getBatch(id);
    if (!row) throw new Error(`redemption batch ${id} vanished after its insert`);
    return row;
  }

  async listBatches(options: { limit: number; afterId?: number }): Promise<RedemptionBatchRecord[]> {
    let q = this.batches().orderBy("b.id", "desc").limit(options.limit);
    if (options.afterId !== undefined) q = q.where("b.id", "<", options.afterId);
    return (await q.execute()).map(batchRecord);
  }

  async getBatch(id: number): Promise<RedemptionBatchRecord | undefined> {
    const row = await this.batches().where("b.id", "=", id).executeTakeFirst();
    return row && batchRecord(row);
  }

  async listCodes(
    batchId: number,
    options: { limit: number; afterId?: number; status?: string },
  ): Promise<RedemptionCodeRecord[]> {
    let q = this.codes().where("batch_id", "=", batchId).orderBy("id").limit(options.limit);
    if (options.afterId !== undefined) q = q.where("id", ">", options.afterId);
    if (options.status !== undefined) q = q.where("status", "=", options.status);
    return (await q.execute()).map(codeRecord);
  }

  private codes() {
    return this.db
      .selectFrom("redemption_codes")
      .select(["id", "batch_id", "shown", "status", "user_id", "redeemed_at", "created_at"]);
  }

  async exportBatch(id: number): Promise<{ shown: string; plain: string }[] | null> {
    return this.db.transaction().execute(async (trx) => {
      const now = unixNow();
      const marked = await trx
        .updateTable("redemption_batches")
        .set({ exported_at: now, updated_at: now })
        .where("id", "=", id)
        .where("exported_at", "is", null)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) !== 1) return null;
      const rows = await trx
        .selectFrom("redemption_codes")
        .select(["shown", "plain"])
        .where("batch_id", "=", id)
        .orderBy("id")
        .execute();
      await trx.updateTable("redemption_codes").set({ plain: null }).where("batch_id", "=", id).execute();
      return rows.map((r) => ({ shown: r.shown, plain: r.plain ?? "" }));
    });
  }

  async setBatchStatus(id: number, status: "enabled" | "disabled"): Promise<void> {
    await this.db
      .updateTable("redemption_batches")
      .set({ status, updated_at: unixNow() })
      .where("id", "=", id)
      .execute();
  }

  async disableCode(id: number): Promise<RedemptionCodeRecord | undefined> {
    await this.db
      .updateTable("redemption_codes")
      .set({ status: "disabled" })
      .where("id", "=", id)
      .where("status", "=", "unused")
      .execute();
    const row = await this.codes().where("id", "=", id).executeTakeFirst();
    return row && codeRecord(row);
  }

  async redeem(input: {
    userId: number;
    tokenId: number | null;
    codeHash: string;
    now: number;
  }): Promise<RedeemOutcome> {
    try {
      return await this.ledger.transaction(async (trx) => {
        const code = await trx
          .selectFrom("redemption_codes as c")
          .innerJoin("redemption_batches as b", "b.id", "c.batch_id")
          .select([
            "c.id",
            "c.batch_id",
            "c.shown",
            "c.status",
            "b.status as batch_status",
            "b.expires_at",
            "b.quota",
            "b.per_user_limit",
          ])
          .where("c.code_hash", "=", input.codeHash)
          .executeTakeFirst();
        if (!code) throw new Refused("unknown");
        if (code.status === "used") throw new Refused("used");
        if (code.status === "disabled" || code.batch_status === "disabled") throw new Refused("disabled");
        if (code.expires_at !== null && Number(code.expires_at) <= input.now) throw new Refused("expired");
        const codeId = Number(code.id);
        const batchId = Number(code.batch_id);
        // The compare-and-set: of concurrent redeems only one moves the row; the batch must still
        // be enabled at that moment.
        const taken = await trx
          .updateTable("redemption_codes")
          .set({ status: "used", user_id: input.userId, redeemed_at: input.now })
          .where("id", "=", codeId)
          .where("status", "=", "unused")
          .where("batch_id", "in", (eb) =>
            eb.selectFrom("redemption_batches").select("id").where("status", "=", "enabled"),
          )
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) !== 1) throw new Refused("used");
        if (code.per_user_limit !== null) {
          const limit = Number(code.per_user_limit);
          const counted = await trx
            .insertInto("redemption_user_counts")
            .values({ batch_id: batchId, user_id: input.userId, used: 1 })
            .onConflict((oc) =>
              oc
                .columns(["batch_id", "user_id"])
                .doUpdateSet({ used: sql`redemption_user_counts.used + 1` })
                .where(sql<boolean>`redemption_user_counts.used < ${limit}`),
            )
            .returning("used")
            .executeTakeFirst();
          if (!counted) throw new Refused("limit_reached");
        }
        const quota = Number(code.quota);
        const reference = `redemption:${codeId}`;
        const credited = await this.ledger.topUpIn(trx, {
          userId: input.userId,
          tokenId: input.tokenId,
          amount: quota,
          reference,
          note: `redemption code ${code.shown}`,
        });
        if (!credited) throw new Refused("used");
        const user = await trx
          .selectFrom("users")
          .select("quota")
          .where("id", "=", input.userId)
          .executeTakeFirstOrThrow();
        return {
          credited: true as const,
          codeId,
          batchId,
          shown: code.shown,
          quota,
          balance: Number(user.quota),
          reference,
        };
      });
    } catch (err) {
      if (err instanceof Refused) return { credited: false, reason: err.reason };
      throw err;
    }
  }
}

function batchRecord(row: {
  id: number;
  name: string;
  quota: number;
  count: number;
  per_user_limit: number | null;
  expires_at: number | null;
  status: string;
  note: string;
  exported_at: number | null;
  created_at: number;
  used: number | string | bigint | null;
}): RedemptionBatchRecord {
  return {
    id: Number(row.id),
    name: row.name,
    quota: Number(row.quota),
    count: Number(row.count),
    used: Number(row.used ?? 0),
    per_user_limit: row.per_user_limit === null ? null : Number(row.per_user_limit),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
    status: row.status,
    note: row.note,
    exported_at: row.exported_at === null ? null : Number(row.exported_at),
    created_at: Number(row.created_at),
  };
}

function codeRecord(row: RedemptionCodeRecord): RedemptionCodeRecord {
  return {
    id: Number(row.id),
    batch_id: Number(row.batch_id),
    shown: row.shown,
    status: row.status,
    user_id: row.user_id === null ? null : Number(row.user_id),
    redeemed_at: row.redeemed_at === null ? null : Number(row.redeemed_at),
    created_at: Number(row.created_at),
  };
}
