/** How a chat call opens (the hold) and closes (settlement or refund, and its request-log row). */
import { GatewayError } from "../../errors.js";
import { orderChannels } from "../channel-selection.js";
import { settlementFor } from "../content/settlement.js";
import { toContentError } from "../content/upstream-failure.js";
import { quotaForTokens, type TokenPrice, type TokenUsage } from "../pricing.js";
import type { ChatAccount } from "./account.js";
import type { ChatRequest } from "./canonical.js";
import { holdUsage, inputTokenEstimate } from "./estimate.js";
import { inlineImages } from "./images.js";
import type { ChatCall, ChatChannel, ChatRelayDeps } from "./ports.js";

export interface Plan<C> {
  ordered: C[];
  request: ChatRequest;
  price: TokenPrice;
  groupRatio: number;
  promptEstimate: number;
  startedAt: number;
}

export interface Outcome<C> {
  channel: C | null;
  account: ChatAccount;
  status: number;
  error: string | null;
}

function quotaAt<C extends ChatChannel>(deps: ChatRelayDeps<C>, plan: Plan<C>, usage: TokenUsage, ratio: number) {
  return quotaForTokens(usage, plan.price, {
    groupRatio: plan.groupRatio,
    channelRatio: ratio,
    quotaPerUnit: deps.quotaPerUnit,
  });
}

function logRow<C extends ChatChannel>(
  deps: ChatRelayDeps<C>,
  call: ChatCall,
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
 * downloads images given by URL, and holds the most the request can cost: every input byte as a
 * token, the output limit times `n`, at the highest ratio of the channels it may go to.
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
    const request = await inlineImages(call.request, (url, field) => deps.fetchImage(url, field, call.signal));
    const groupRatio = await deps.prices.groupRatio(caller.group);
    const plan: Plan<C> = {
      ordered,
      request,
      price,
      groupRatio,
      promptEstimate: inputTokenEstimate(request),
      startedAt,
    };
    const ratio = Math.max(...ordered.map((c) => c.priceRatio));
    await deps.ledger.charge({
      userId: caller.userId,
      tokenId: caller.tokenId,
      amount: quotaAt(deps, plan, holdUsage(request, deps.modelMaxOutputTokens), ratio),
      reference: call.reference,
      note: `hold for ${model}, request ${call.requestId}`,
    });
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

/**
 * Settles (or refunds) the hold once, and writes the request-log row. Never throws. Returns the
 * usage billed (null when refunded).
 */
export async function finish<C extends ChatChannel>(
  deps: ChatRelayDeps<C>,
  call: ChatCall,
  plan: Plan<C>,
  outcome: Outcome<C>,
): Promise<TokenUsage | null> {
  const settlement = settlementFor(outcome.account, plan.promptEstimate);
  let quota = 0;
  let usage: TokenUsage | null = null;
  try {
    if (settlement.kind === "refund") {
      await deps.ledger.refund(call.reference, "nothing was produced");
    } else {
      usage = settlement.usage;
      const channel = outcome.channel ?? (plan.ordered[0] as C);
      quota = quotaAt(deps, plan, usage, channel.priceRatio);
      await deps.ledger.settle(call.reference, quota, settlement.estimated ? "estimated usage" : "reported usage");
      if (settlement.estimated) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, usage },
          "chat usage estimated from the text produced: the upstream reported none",
        );
      }
    }
  } catch (err) {
    deps.log.error(
      { requestId: call.requestId, err, reference: call.reference },
      "chat charge could not be settled; it stays at the hold",
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
