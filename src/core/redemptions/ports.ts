import type { RedemptionRefusal } from "./refusals.js";

/** A batch as stored, with the count of its codes redeemed. */
export interface RedemptionBatchRecord {
  id: number;
  name: string;
  quota: number;
  count: number;
  used: number;
  per_user_limit: number | null;
  expires_at: number | null;
  status: string;
  note: string;
  exported_at: number | null;
  created_at: number;
}

/** A code as stored: never its full text (only its hash and `shown`). */
export interface RedemptionCodeRecord {
  id: number;
  batch_id: number;
  shown: string;
  status: string;
  user_id: number | null;
  redeemed_at: number | null;
  created_at: number;
}

/** A new code: what the store keeps to find it, to list it, and to export it once. */
export interface NewRedemptionCode {
  hash: string;
  shown: string;
  plain: string;
}

/** The batches and codes as operators manage them. */
export interface RedemptionBatchStore {
  createBatch(input: {
    name: string;
    quota: number;
    perUserLimit: number | null;
    expiresAt: number | null;
    note: string;
    codes: NewRedemptionCode[];
  }): Promise<RedemptionBatchRecord>;
  listBatches(options: { limit: number; afterId?: number }): Promise<RedemptionBatchRecord[]>;
  getBatch(id: number): Promise<RedemptionBatchRecord | undefined>;
  listCodes(
    batchId: number,
    options: { limit: number; afterId?: number; status?: string },
  ): Promise<RedemptionCodeRecord[]>;
  /**
   * The batch's full codes, read and erased in one transaction, once: null when the batch was
   * exported before (or is unknown).
   */
  exportBatch(id: number): Promise<{ shown: string; plain: string }[] | null>;
  setBatchStatus(id: number, status: "enabled" | "disabled"): Promise<void>;
  /** Disables a code not yet redeemed; the code as it stands, undefined when unknown. */
  disableCode(id: number): Promise<RedemptionCodeRecord | undefined>;
}

/** How a redemption went: credited, or refused having written nothing. */
export type RedeemOutcome =
  | {
      credited: true;
      codeId: number;
      batchId: number;
      shown: string;
      quota: number;
      balance: number;
      reference: string;
    }
  | { credited: false; reason: RedemptionRefusal };

/** The redemption itself, decided by the store in one transaction. */
export interface RedemptionLedger {
  redeem(input: { userId: number; tokenId: number | null; codeHash: string; now: number }): Promise<RedeemOutcome>;
}

/** Failed redemptions counted per key (a user, an address) to slow guessing. */
export interface RedemptionAttempts {
  /** Refuses (429) when any of the keys failed too often. */
  assertAllowed(keys: string[]): Promise<void>;
  recordFailure(keys: string[]): Promise<void>;
}

/** What a user's redemption works on. */
export interface RedemptionPorts {
  ledger: RedemptionLedger;
  attempts: RedemptionAttempts;
  quotaPerUnit: number;
  /** Unix seconds. */
  now(): number;
}
