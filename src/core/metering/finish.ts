import { tokensOfUsage } from "../limits/rate-limit-rules.js";
import type { Told } from "./call-errors.js";
import type { CallKind } from "./call-kind.js";
import { type Plan, ratiosOn } from "./plan.js";
import type { MeteredCall, MeteredChannel, MeteringDeps } from "./ports.js";
import { logRow } from "./request-log.js";

/** How a call ended: the channel that answered (and the last one tried), what it produced, how it is told. */
export interface Outcome<C, Acc> extends Told {
  channel: C | null;
  tried: C | null;
  account: Acc;
}

type FinishDeps<C extends MeteredChannel, P> = Pick<
  MeteringDeps<C, P>,
  "quotaPerUnit" | "chargeOpenMs" | "usageRecordMs" | "ledger" | "limits" | "logRequest" | "log" | "now"
>;

/**
 * Quota kept for `usage`. An absurd report (beyond the safe integers) is billed at the largest
 * safe amount: the settlement then takes what the credit line allows and records the rest,
 * instead of failing and leaving the charge to a refund. Quoted pricing never passes its hold, nor
 * does an estimate (`estimated`): the gateway's own count of an answer whose upstream reported no
 * usage bills at most what the request was held for.
 */
function keptQuota<Call, Sent, P, U, Acc, C extends MeteredChannel>(
  deps: Pick<FinishDeps<C, P>, "quotaPerUnit">,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  plan: Plan<C, P, Sent>,
  settled: { usage: U; estimated?: boolean },
  channel: C,
): number {
  const quota = kind.quota(settled.usage, plan.price, ratiosOn(deps, plan.groupRatio, channel));
  const safe = Number.isSafeInteger(quota) ? quota : Number.MAX_SAFE_INTEGER;
  return kind.pricing === "quoted" || settled.estimated === true ? Math.min(plan.held, safe) : safe;
}

/**
 * Settles (or refunds) the charge once, and writes the call's request-log row. Never throws.
 * Returns the usage billed (null when refunded).
 */
export async function finish<Call extends MeteredCall, Sent, P, U, Acc, C extends MeteredChannel>(
  deps: FinishDeps<C, P>,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  call: Call,
  plan: Plan<C, P, Sent>,
  outcome: Outcome<C, Acc>,
): Promise<U | null> {
  const settlement = kind.settlement(outcome.account, plan.estimate, call);
  let quota = 0;
  let usage: U | null = null;
  if (settlement.kind === "settle") {
    usage = settlement.usage;
    quota = keptQuota(deps, kind, plan, settlement, outcome.channel ?? (plan.ordered[0] as C));
  }
  // The rate limits keep the tokens used, every bucket, instead of the worst case reserved.
  if (plan.limited) deps.limits?.settle(plan.limited, usage === null ? 0 : tokensOfUsage(kind.logged(usage)));
  try {
    if (settlement.kind === "refund") {
      await deps.ledger.refund(call.reference, settlement.note);
    } else {
      const settled = await deps.ledger.settle(call.reference, quota, settlement.note);
      if (settlement.clamped && settlement.clamped.length > 0) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, clamped: settlement.clamped },
          `${kind.label} usage report had fields that cannot be counted: clamped into their wholes`,
        );
      }
      if (settlement.estimated) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, usage },
          `${kind.label} usage estimated from the text produced: the upstream reported none`,
        );
      }
      if (settled.uncollected > 0) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, quota, uncollected: settled.uncollected },
          `${kind.label} cost above the hold: taken down to the user's credit line, the rest recorded as uncollected`,
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
      `${kind.label} charge could not be closed; it stays open and the charge reaper closes it`,
    );
  }
  const channel = outcome.channel ?? (kind.logsAttempt ? outcome.tried : null);
  logRow(deps, call, plan.startedAt, {
    channelId: channel ? channel.id : null,
    usage: kind.logged(usage),
    estimated: settlement.kind === "settle" && settlement.estimated === true,
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
export function progressRecorder<Call extends MeteredCall, Sent, P, U, Acc, C extends MeteredChannel>(
  deps: FinishDeps<C, P>,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  call: Call,
  plan: Plan<C, P, Sent>,
  outcome: Outcome<C, Acc>,
) {
  const now = deps.now ?? Date.now;
  let last = now();
  let recorded = 0;
  return () => {
    const at = now();
    if (at - last < deps.usageRecordMs) return;
    last = at;
    const settlement = kind.settlement(outcome.account, plan.estimate, call);
    const seen =
      settlement.kind === "settle"
        ? keptQuota(deps, kind, plan, settlement, outcome.channel ?? (plan.ordered[0] as C))
        : 0;
    if (seen <= recorded) return;
    recorded = seen;
    deps.ledger.noteUsage(call.reference, seen, at + deps.chargeOpenMs).catch((err: unknown) => {
      deps.log.warn({ requestId: call.requestId, err }, "the stream's usage could not be recorded on its charge");
    });
  };
}
