import { codeHash, normalizeCode } from "./codes.js";
import type { RedemptionPorts } from "./ports.js";
import { redemptionRefused } from "./refusals.js";

/** What a credited redemption answers. */
export interface RedemptionResult {
  code: string;
  batch_id: number;
  quota: number;
  amount: number;
  balance: number;
  reference: string;
}

/** Quota in currency units, to the precision a person reads (6 decimals). */
export function quotaAsAmount(quota: number, quotaPerUnit: number): number {
  return Math.round((quota / quotaPerUnit) * 1e6) / 1e6;
}

/**
 * A user redeems a code, from the console or with an API token. The store decides in one
 * transaction (the code's compare-and-set, the limit per user, the ledger row referencing the
 * code), so a code credits once whatever concurrent redeems on any instance do. A refusal
 * credits nothing and counts against the failed-attempt limit of every key (the user, and the
 * address where the console gives one); over that limit every attempt is refused with 429, a
 * good code too, so codes cannot be guessed at speed.
 */
export async function redeemCode(
  ports: RedemptionPorts,
  input: { userId: number; tokenId: number | null; code: string; address?: string },
): Promise<RedemptionResult> {
  const keys = [`user:${input.userId}`, ...(input.address ? [`ip:${input.address}`] : [])];
  await ports.attempts.assertAllowed(keys);
  const normal = normalizeCode(input.code);
  const outcome = /^[0-9A-Z]{1,80}$/.test(normal)
    ? await ports.ledger.redeem({
        userId: input.userId,
        tokenId: input.tokenId,
        codeHash: codeHash(normal),
        now: ports.now(),
      })
    : ({ credited: false, reason: "unknown" } as const);
  if (!outcome.credited) {
    await ports.attempts.recordFailure(keys);
    throw redemptionRefused(outcome.reason);
  }
  return {
    code: outcome.shown,
    batch_id: outcome.batchId,
    quota: outcome.quota,
    amount: quotaAsAmount(outcome.quota, ports.quotaPerUnit),
    balance: outcome.balance,
    reference: outcome.reference,
  };
}
