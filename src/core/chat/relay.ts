import { GatewayError } from "../../errors.js";
import { orderChannels } from "../channel-selection.js";
import { CLIENT_CLOSED, upstreamModelFor } from "../content/relay.js";
import { settlementFor } from "../content/settlement.js";
import { toContentError } from "../content/upstream-failure.js";
import { withFailover } from "../failover.js";
import { quotaForTokens, type TokenPrice, type TokenUsage } from "../pricing.js";
import { UpstreamError } from "../upstream-error.js";
import { ChatAccount } from "./account.js";
import type { ChatAnswer, ChatEvent, ChatRequest } from "./canonical.js";
import { holdUsage, inputTokenEstimate } from "./estimate.js";
import { inlineImages } from "./images.js";
import type { ChatCall, ChatChannel, ChatRelayDeps, ChatSink } from "./ports.js";

interface Plan<C> {
  ordered: C[];
  request: ChatRequest;
  price: TokenPrice;
  groupRatio: number;
  promptEstimate: number;
  startedAt: number;
}

interface Outcome<C> {
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
async function begin<C extends ChatChannel>(deps: ChatRelayDeps<C>, call: ChatCall): Promise<Plan<C>> {
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
async function finish<C extends ChatChannel>(
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

function reporter<C extends ChatChannel>(deps: ChatRelayDeps<C>, call: ChatCall) {
  return ({ channel, error }: { channel: C; error: UpstreamError | null }) => {
    // An upstream call aborted on the client's behalf says nothing about the channel.
    if (call.signal.aborted) return;
    deps.channels.report(channel, error);
  };
}

function unlessClientLeft(call: ChatCall, err: unknown): unknown {
  return call.signal.aborted ? new UpstreamError("refused", "The client closed the request.", { cause: err }) : err;
}

function failedCall(call: ChatCall, err: unknown, outcome: Outcome<unknown>): GatewayError {
  const left = call.signal.aborted ? new GatewayError("GW_ERR_BAD_REQUEST", "The client closed the request.") : null;
  const gw = left ?? toContentError(err);
  outcome.status = left ? CLIENT_CLOSED : gw.status;
  outcome.error = gw.message;
  return gw;
}

/** The answer with usage filled in from what was billed, when the upstream reported none. */
function withBilledUsage(answer: ChatAnswer, billed: TokenUsage | null): ChatAnswer {
  if (answer.usage || !billed) return answer;
  return {
    ...answer,
    usage: {
      inputTokens: billed.promptTokens,
      outputTokens: billed.outputTokens,
      cachedInputTokens: billed.cachedTokens,
      reasoningTokens: 0,
    },
  };
}

/** A chat call answered at once: relayed with failover, billed from its reported usage. */
export async function completeChat<C extends ChatChannel>(deps: ChatRelayDeps<C>, call: ChatCall): Promise<ChatAnswer> {
  const plan = await begin(deps, call);
  const outcome: Outcome<C> = { channel: null, account: new ChatAccount(), status: 200, error: null };
  let answer: ChatAnswer | null = null;
  let billed: TokenUsage | null = null;
  try {
    const { result, channel } = await withFailover(
      plan.ordered,
      { maxAttempts: deps.maxChannelAttempts },
      async (ch) => {
        const release = await deps.channels.acquire(ch);
        try {
          return await deps.upstreamFor(ch).complete(ch, upstreamModelFor(ch, call.model), plan.request, call.signal);
        } catch (err) {
          throw unlessClientLeft(call, err);
        } finally {
          release();
        }
      },
      reporter(deps, call),
    );
    outcome.channel = channel;
    outcome.account.observeAnswer(result);
    answer = result;
  } catch (err) {
    throw failedCall(call, err, outcome);
  } finally {
    billed = await finish(deps, call, plan, outcome);
  }
  return withBilledUsage(answer, billed);
}

/**
 * A streamed chat call: the stream is opened with failover (until its first event arrived), then
 * every event goes to the sink as it comes. A failure after that ends the answer with an error
 * event; a client that goes away aborts the upstream call. What was produced is billed, and the
 * answer ends only after the call is settled. Throws a GatewayError only when nothing was written.
 */
export async function streamChat<C extends ChatChannel>(
  deps: ChatRelayDeps<C>,
  call: ChatCall,
  sink: ChatSink,
): Promise<void> {
  const plan = await begin(deps, call);
  const outcome: Outcome<C> = { channel: null, account: new ChatAccount(), status: 200, error: null };
  let releaseSlot: (() => void) | null = null;
  let ending: "end" | GatewayError | null = null;
  let billed: TokenUsage | null = null;
  try {
    type Opened = { events: AsyncGenerator<ChatEvent>; first: ChatEvent; release: () => void };
    let opened: { result: Opened; channel: C };
    try {
      opened = await withFailover(
        plan.ordered,
        { maxAttempts: deps.maxChannelAttempts },
        async (ch): Promise<Opened> => {
          // The channel's slot is held for the whole stream.
          const release = await deps.channels.acquire(ch);
          try {
            const events = await deps
              .upstreamFor(ch)
              .openStream(ch, upstreamModelFor(ch, call.model), plan.request, call.signal);
            const first = await events.next();
            if (first.done) throw new UpstreamError("retryable", "The upstream ended the stream before any event.");
            return { events, first: first.value, release };
          } catch (err) {
            release();
            throw unlessClientLeft(call, err);
          }
        },
        reporter(deps, call),
      );
    } catch (err) {
      throw failedCall(call, err, outcome);
    }
    releaseSlot = opened.result.release;
    outcome.channel = opened.channel;
    const { events, first } = opened.result;
    try {
      outcome.account.observe(first);
      await sink.event(first);
      for await (const event of events) {
        outcome.account.observe(event);
        await sink.event(event);
      }
      if (call.signal.aborted) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else if (!outcome.account.complete) {
        throw new UpstreamError("retryable", "The upstream ended the stream before the answer was complete.");
      } else {
        ending = "end";
      }
    } catch (err) {
      if (call.signal.aborted) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else {
        const error = toContentError(err);
        outcome.status = error.status;
        outcome.error = error.message;
        deps.log.warn({ requestId: call.requestId, err }, "chat stream failed after its first event");
        ending = error;
      }
      await events.return(undefined);
    }
  } finally {
    releaseSlot?.();
    billed = await finish(deps, call, plan, outcome);
    if (ending === "end") {
      const usage = outcome.account.reported ?? {
        inputTokens: billed?.promptTokens ?? 0,
        outputTokens: billed?.outputTokens ?? 0,
        cachedInputTokens: billed?.cachedTokens ?? 0,
        reasoningTokens: 0,
      };
      await sink.end(usage);
    } else if (ending) await sink.fail(ending);
  }
}
