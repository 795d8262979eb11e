import { GatewayError } from "../errors.js";
import { codeHash, newRedemptionCode, shownCode } from "../redemptions/codes.js";
import type { RedemptionBatchRecord, RedemptionCodeRecord } from "../redemptions/ports.js";
import { quotaAsAmount } from "../redemptions/redeem.js";
import { found, refused } from "./checks.js";
import type { AdminPorts } from "./ports.js";

/**
 * Redemption codes as operators manage them, over HTTP, from the console and the command line:
 * a batch is generated (its codes kept as hashes, with their full text only until the batch's one
 * export), listed, exported as CSV once, and disabled whole or code by code.
 */

/** A batch to generate, as the admin API's body gives it. */
export interface GenerateBatchInput {
  count: number;
  quota?: number;
  amount?: number;
  expires_at?: number | null;
  prefix?: string;
  per_user_limit?: number | null;
  note?: string;
}

export interface RedemptionBatchView {
  id: number;
  prefix: string;
  quota: number;
  amount: number;
  count: number;
  used: number;
  per_user_limit: number | null;
  expires_at: number | null;
  status: "enabled" | "disabled";
  note: string;
  exported_at: number | null;
  created_at: number;
}

export interface RedemptionCodeView {
  id: number;
  batch_id: number;
  code: string;
  status: "unused" | "used" | "disabled";
  user_id: number | null;
  redeemed_at: number | null;
  created_at: number;
}

function batchView(s: AdminPorts, row: RedemptionBatchRecord): RedemptionBatchView {
  return {
    id: Number(row.id),
    prefix: row.name,
    quota: Number(row.quota),
    amount: quotaAsAmount(Number(row.quota), s.quotaPerUnit),
    count: Number(row.count),
    used: Number(row.used),
    per_user_limit: row.per_user_limit === null ? null : Number(row.per_user_limit),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
    status: row.status === "disabled" ? "disabled" : "enabled",
    note: row.note,
    exported_at: row.exported_at === null ? null : Number(row.exported_at),
    created_at: Number(row.created_at),
  };
}

function codeView(row: RedemptionCodeRecord): RedemptionCodeView {
  return {
    id: Number(row.id),
    batch_id: Number(row.batch_id),
    code: row.shown,
    status: row.status === "used" ? "used" : row.status === "disabled" ? "disabled" : "unused",
    user_id: row.user_id === null ? null : Number(row.user_id),
    redeemed_at: row.redeemed_at === null ? null : Number(row.redeemed_at),
    created_at: Number(row.created_at),
  };
}

/** The quota each code credits: `quota` as given, or `amount` in currency units converted. */
export function quotaOfBatch(body: Pick<GenerateBatchInput, "quota" | "amount">, quotaPerUnit: number): number {
  if (body.quota !== undefined && body.amount !== undefined)
    throw refused("amount", "and body.quota: give one of them");
  if (body.quota !== undefined) return body.quota;
  if (body.amount === undefined) throw refused("quota", "or body.amount is required");
  const quota = Math.round(body.amount * quotaPerUnit);
  if (!Number.isSafeInteger(quota)) throw refused("amount", "is more quota than a safe integer holds");
  if (quota < 1) throw refused("amount", "is less than one unit of quota");
  return quota;
}

export async function generateRedemptionBatch(
  s: AdminPorts,
  body: GenerateBatchInput,
  now: number,
): Promise<RedemptionBatchView> {
  const quota = quotaOfBatch(body, s.quotaPerUnit);
  if (body.expires_at != null && body.expires_at <= now) throw refused("expires_at", "is in the past");
  const prefix = (body.prefix ?? "").toUpperCase();
  const codes = Array.from({ length: body.count }, () => {
    const plain = newRedemptionCode(prefix);
    return { hash: codeHash(plain), shown: shownCode(plain), plain };
  });
  const row = await s.redemptions.createBatch({
    name: prefix,
    quota,
    perUserLimit: body.per_user_limit ?? null,
    expiresAt: body.expires_at ?? null,
    note: body.note ?? "",
    codes,
  });
  return batchView(s, row);
}

export async function listRedemptionBatches(
  s: AdminPorts,
  options: { limit: number; afterId?: number },
): Promise<RedemptionBatchView[]> {
  return (await s.redemptions.listBatches(options)).map((row) => batchView(s, row));
}

export async function showRedemptionBatch(s: AdminPorts, id: number): Promise<RedemptionBatchView> {
  return batchView(s, found(await s.redemptions.getBatch(id), "redemption batch", id));
}

export async function listRedemptionCodes(
  s: AdminPorts,
  batchId: number,
  options: { limit: number; afterId?: number; status?: string },
): Promise<RedemptionCodeView[]> {
  found(await s.redemptions.getBatch(batchId), "redemption batch", batchId);
  return (await s.redemptions.listCodes(batchId, options)).map(codeView);
}

/** A CSV field, quoted when it must be. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The batch's codes in full, as CSV (`code,batch_id,quota,amount,expires_at`): the only time they
 * can be read. The store erases them in the same step, so a second export is a 409.
 */
export async function exportRedemptionBatch(s: AdminPorts, id: number): Promise<string> {
  const batch = batchView(s, found(await s.redemptions.getBatch(id), "redemption batch", id));
  const codes = await s.redemptions.exportBatch(id);
  if (codes === null) {
    throw new GatewayError(
      "GW_ERR_CONFLICT",
      `Redemption batch ${id} was exported already: its codes are kept only as hashes now.`,
    );
  }
  const expires = batch.expires_at === null ? "" : new Date(batch.expires_at * 1000).toISOString();
  const lines = ["code,batch_id,quota,amount,expires_at"];
  for (const code of codes) {
    lines.push([code.plain, batch.id, batch.quota, batch.amount, expires].map(csvField).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

export async function setRedemptionBatchStatus(
  s: AdminPorts,
  id: number,
  status: "enabled" | "disabled",
): Promise<RedemptionBatchView> {
  found(await s.redemptions.getBatch(id), "redemption batch", id);
  await s.redemptions.setBatchStatus(id, status);
  return showRedemptionBatch(s, id);
}

/** Disables one code; a code already redeemed is a 409 (its credit stands). */
export async function disableRedemptionCode(s: AdminPorts, id: number): Promise<RedemptionCodeView> {
  const row = found(await s.redemptions.disableCode(id), "redemption code", id);
  if (row.status === "used") {
    throw new GatewayError("GW_ERR_CONFLICT", `Redemption code ${id} was redeemed already; it cannot be disabled.`);
  }
  return codeView(row);
}
