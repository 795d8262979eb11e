/**
 * How a chat call opens: its hold, with the close-by time of its charge. It closes (settlement or
 * refund, progress recorded by streams, the request-log row) by the content relay's billing,
 * which chat shares: see content/call-billing.ts.
 */

import { orderChannels } from "../channel-selection.js";
import { type Outcome as BillingOutcome, type Plan as BillingPlan, logRow, quotaFor } from "../content/call-billing.js";
import { toContentError } from "../content/upstream-failure.js";
import { GatewayError } from "../errors.js";
import type { ChatAccount } from "./account.js";
import type { ChatRequest } from "./canonical.js";
import { holdUsage, inputTokenEstimate } from "./estimate.js";
import { inlineImages } from "./images.js";
import type { ChatCall, ChatChannel, ChatRelayDeps } from "./ports.js";

/** A content plan, plus the request as sent upstream (images given by URL inlined). */
export interface Plan<C> extends BillingPlan<C> {
  request: ChatRequest;
}

export type Outcome<C> = BillingOutcome<C, ChatAccount>;

/** A refused hold, told with what was held: the client can ask for less output. */
function explainRefusedHold(err: unknown, amount: number, inputTokens: number, outputTokens: number): unknown {
  if (!(err instanceof GatewayError)) return err;
  if (err.errorName !== "GW_ERR_INSUFFICIENT_QUOTA" && err.errorName !== "GW_ERR_TOKEN_QUOTA_EXCEEDED") return err;
  const whose = err.errorName === "GW_ERR_INSUFFICIENT_QUOTA" ? "the balance" : "the token's quota limit";
  return new GatewayError(
    err.errorName,
    `This request may cost up to ${amount} quota (${inputTokens} input and ${outputTokens} output tokens at most), more than ${whose} allows; a lower output limit (max_tokens) lowers that bound.`,
  );
}

/**
 * The channels that can serve the request faithfully. When channels exist but none can (the
 * request uses a feature no serving protocol has), the client's field is named in a 400.
 */
function translatableChannels<C extends ChatChannel>(deps: ChatRelayDeps<C>, candidates: C[], request: ChatRequest) {
  const usable: C[] = [];
  let refusal: { field: string; reason: string } | null = null;
  for (const channel of candidates) {
    const why = deps.upstreamFor(channel).untranslatable(request);
    if (why) refusal ??= why;
    else usable.push(channel);
  }
  if (usable.length === 0 && refusal) {
    throw new GatewayError("GW_ERR_VALIDATION", `${refusal.field}: ${refusal.reason}`, { param: refusal.field });
  }
  return usable;
}

/**
 * Checks that the model can be served and billed, orders the channels that can serve the request,
 * holds the most the request can cost (every input byte as a token, a bound per image, the output
 * limit times `n`, at the highest ratio of the channels it may go to), and only then downloads the
 * images given by URL: a request the balance or the token refuses fetches nothing. An image that
 * cannot be used refunds the hold.
 */
export async function begin<C extends ChatChannel>(deps: ChatRelayDeps<C>, call: ChatCall): Promise<Plan<C>> {
  const startedAt = (deps.now ?? Date.now)();
  const { model, caller } = call;
  try {
    if (!(await deps.channels.isKnownModel(model))) {
      throw new GatewayError("GW_ERR_NOT_FOUND", `The model "${model}" does not exist.`, { param: "model" });
    }
    const price = await deps.prices.contentPrice(model);
    if (!price) {
      throw new GatewayError("GW_ERR_ACTION_UNAVAILABLE", `Model "${model}" has no price set, so it cannot be used.`);
    }
    const candidates = await deps.channels.candidates(model, caller.group);
    if (candidates.length === 0) {
      throw new GatewayError("GW_ERR_NO_CHANNEL", `No enabled channel serves model "${model}" right now.`);
    }
    const ordered = orderChannels(translatableChannels(deps, candidates, call.request)).slice(
      0,
      Math.max(1, deps.maxChannelAttempts),
    );
    const groupRatio = await deps.prices.groupRatio(caller.group);
    // An image counts the same bound whether given by URL or inline: the hold and the estimate
    // are known before any image is fetched.
    const plan: Plan<C> = {
      label: "chat",
      ordered,
      request: call.request,
      price,
      groupRatio,
      promptEstimate: inputTokenEstimate(call.request),
      startedAt,
    };
    // Failover may land on any candidate: the hold is at the dearest ratio among them.
    const dearest = ordered.reduce((a, b) => (b.priceRatio > a.priceRatio ? b : a));
    const worst = holdUsage(call.request, deps.modelMaxOutputTokens);
    const amount = quotaFor(deps, plan, worst, dearest);
    if (!Number.isSafeInteger(amount)) {
      throw new GatewayError("GW_ERR_VALIDATION", "The request asks for more output than can be charged.", {
        param: "max_tokens",
      });
    }
    try {
      await deps.ledger.charge({
        userId: caller.userId,
        tokenId: caller.tokenId,
        amount,
        reference: call.reference,
        note: `hold for ${model}, request ${call.requestId}`,
        closeBy: startedAt + deps.chargeOpenMs,
      });
    } catch (err) {
      throw explainRefusedHold(err, amount, worst.promptTokens, worst.outputTokens);
    }
    try {
      plan.request = await inlineImages(call.request, (url, field) => deps.fetchImage(url, field, call.signal));
    } catch (err) {
      await deps.ledger.refund(call.reference, "an input image could not be used").catch((refundErr: unknown) => {
        // The charge stays open with nothing seen on it: the charge reaper refunds it.
        deps.log.warn({ err: refundErr, reference: call.reference }, "chat hold could not be refunded now");
      });
      throw err;
    }
    return plan;
  } catch (err) {
    const error = toContentError(err);
    logRow(deps, call, startedAt, {
      channelId: null,
      usage: null,
      quota: 0,
      status: error.status,
      error: error.message,
    });
    throw error;
  }
}
