import { GatewayError } from "../errors.js";
import { quotaForTokens, type TokenPrice, type TokenUsage } from "../pricing.js";
import type { ContentCall, ContentChannel, ContentRelayDeps } from "./ports.js";
import { settlementFor } from "./settlement.js";
import type { ContentAccount } from "./usage.js";

// The billing side of a token-priced call (content, and chat, which shares it): its plan (prices,
// the hold), the settlement or refund that closes its charge, the progress a stream records on
// it, and its request-log row.

/** What billing needs of a relay's ports. */
export type BillingDeps<C extends ContentChannel> = Pick<
  ContentRelayDeps<C>,
  "quotaPerUnit" | "chargeOpenMs" | "usageRecordMs" | "ledger" | "logRequest" | "log" | "now"
>;

/** What billing needs of a call. */
export type BilledCall = Pick<ContentCall, "requestId" | "reference" | "caller" | "model">;

/** What an answer produced, as the settlement rule reads it (see settlement.ts). */
export type BilledAccount = Pick<ContentAccount, "usage" | "chunks" | "textChars">;

/** What a call was planned with before its upstream call: channels in order, prices, the prompt estimate. */
export interface Plan<C> {
  /** What the call is, in log lines ("content", "chat"). */
  label: string;
  ordered: C[];
  price: TokenPrice;
  groupRatio: number;
  promptEstimate: number;
  startedAt: number;
}

/** How a call ended: the channel that answered, what it produced, the status logged. */
export interface Outcome<C, A extends BilledAccount = ContentAccount> {
  channel: C | null;
  account: A;
  status: number;
  error: string | null;
}

/** Quota for `usage` at the plan's prices and `channel`'s ratio. */
export function quotaFor<C extends ContentChannel>(
  deps: Pick<BillingDeps<C>, "quotaPerUnit">,
  plan: Plan<C>,
  usage: TokenUsage,
  channel: C,
) {
  return quotaForTokens(usage, plan.price, {
    groupRatio: plan.groupRatio,
    channelRatio: channel.priceRatio,
    quotaPerUnit: deps.quotaPerUnit,
  });
}

export function logRow<C extends ContentChannel>(
  deps: BillingDeps<C>,
  call: BilledCall,
  startedAt: number,
  fields: { channelId: number | null; usage: TokenUsage | null; quota: number; status: number; error: string | null },
) {
  deps.logRequest({
    requestId: call.requestId,
    userId: call.caller.userId,
    tokenId: call.caller.tokenId,
    channelId: fields.channelId,
    model: call.model,
    promptTokens: fields.usage?.promptTokens ?? 0,
    outputTokens: fields.usage?.outputTokens ?? 0,
    cachedTokens: fields.usage?.cachedTokens ?? 0,
    quota: fields.quota,
    latencyMs: Math.max(0, (deps.now ?? Date.now)() - startedAt),
    status: fields.status,
    error: fields.error,
  });
}

/**
 * Quota of usage an upstream reported. An absurd report (beyond the safe integers) is billed at
 * the largest safe amount: the settlement then takes what the credit line allows and records the
 * rest, instead of failing and leaving the charge to a refund.
 */
function usedQuota<C extends ContentChannel>(deps: BillingDeps<C>, plan: Plan<C>, usage: TokenUsage, channel: C) {
  const quota = quotaFor(deps, plan, usage, channel);
  return Number.isSafeInteger(quota) ? quota : Number.MAX_SAFE_INTEGER;
}

/** A refused hold, told with what was held: the client can ask for less output and thinking. */
export function explainRefusedHold(err: unknown, amount: number, worst: TokenUsage): unknown {
  if (!(err instanceof GatewayError)) return err;
  if (err.errorName !== "GW_ERR_INSUFFICIENT_QUOTA" && err.errorName !== "GW_ERR_TOKEN_QUOTA_EXCEEDED") return err;
  const whose = err.errorName === "GW_ERR_INSUFFICIENT_QUOTA" ? "the balance" : "the token's quota limit";
  return new GatewayError(
    err.errorName,
    `This request may cost up to ${amount} quota (${worst.promptTokens} prompt and ${worst.outputTokens} output tokens at most), more than ${whose} allows; generationConfig.maxOutputTokens and thinkingConfig.thinkingBudget lower that bound.`,
  );
}

/**
 * Settles (or refunds) the charge once, and writes the call's request-log row. Never throws.
 * Returns the usage billed (null when refunded).
 */
export async function finish<C extends ContentChannel>(
  deps: BillingDeps<C>,
  call: BilledCall,
  plan: Plan<C>,
  outcome: Outcome<C, BilledAccount>,
): Promise<TokenUsage | null> {
  const settlement = settlementFor(outcome.account, plan.promptEstimate);
  let quota = 0;
  let usage: TokenUsage | null = null;
  if (settlement.kind === "settle") {
    usage = settlement.usage;
    quota = usedQuota(deps, plan, usage, outcome.channel ?? (plan.ordered[0] as C));
  }
  try {
    if (settlement.kind === "refund") {
      await deps.ledger.refund(call.reference, "nothing was produced");
    } else {
      const settled = await deps.ledger.settle(
        call.reference,
        quota,
        settlement.estimated ? "estimated usage" : "reported usage",
      );
      if (settlement.estimated) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, usage },
          `${plan.label} usage estimated from the text produced: the upstream reported none`,
        );
      }
      if (settled.uncollected > 0) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, quota, uncollected: settled.uncollected },
          `${plan.label} cost above the hold: taken down to the user's credit line, the rest recorded as uncollected`,
        );
      }
    }
  } catch (err) {
    // The charge stays open, with what the call cost recorded on it: the reaper closes it soon.
    const noted = await deps.ledger
      .noteUsage(call.reference, quota, (deps.now ?? Date.now)())
      .then(() => true)
      .catch(() => false);
    deps.log.error(
      { requestId: call.requestId, err, reference: call.reference, quota, noted },
      `${plan.label} charge could not be closed; it stays open and the charge reaper closes it`,
    );
  }
  logRow(deps, call, plan.startedAt, {
    channelId: outcome.channel ? outcome.channel.id : null,
    usage,
    quota,
    status: outcome.status,
    error: outcome.error,
  });
  return usage;
}

/**
 * Records a stream's progress on its open charge, at most once per `usageRecordMs`: the cost of
 * what was seen so far (what the reaper settles to should this process die mid-stream), and a new
 * close-by time, so that a stream that is still running is never taken for an abandoned one.
 * Not awaited by the stream; a failed record is logged and the next one tries again.
 */
export function progressRecorder<C extends ContentChannel>(
  deps: BillingDeps<C>,
  call: BilledCall,
  plan: Plan<C>,
  outcome: Outcome<C, BilledAccount>,
) {
  const now = deps.now ?? Date.now;
  let last = now();
  let recorded = 0;
  return () => {
    const at = now();
    if (at - last < deps.usageRecordMs) return;
    last = at;
    const settlement = settlementFor(outcome.account, plan.promptEstimate);
    const seen =
      settlement.kind === "settle"
        ? usedQuota(deps, plan, settlement.usage, outcome.channel ?? (plan.ordered[0] as C))
        : 0;
    if (seen <= recorded) return;
    recorded = seen;
    deps.ledger.noteUsage(call.reference, seen, at + deps.chargeOpenMs).catch((err: unknown) => {
      deps.log.warn({ requestId: call.requestId, err }, "the stream's usage could not be recorded on its charge");
    });
  };
}
