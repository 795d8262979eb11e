import { GatewayError } from "../../errors.js";
import { orderChannels } from "../channel-selection.js";
import { withFailover } from "../failover.js";
import { quotaForTokens, type TokenPrice, type TokenUsage } from "../pricing.js";
import { UpstreamError } from "../upstream-error.js";
import { chargeUsage } from "./estimate.js";
import type {
  ContentCall,
  ContentChannel,
  ContentChunk,
  ContentRelayDeps,
  ContentSink,
  OpenedContentStream,
} from "./ports.js";
import { settlementFor } from "./settlement.js";
import { toContentError } from "./upstream-failure.js";
import { ContentAccount } from "./usage.js";

/** Status logged for a call the client abandoned. */
export const CLIENT_CLOSED = 499;

interface Plan<C> {
  ordered: C[];
  price: TokenPrice;
  groupRatio: number;
  promptEstimate: number;
  startedAt: number;
}

interface Outcome<C> {
  channel: C | null;
  account: ContentAccount;
  status: number;
  error: string | null;
}

/** The model name the channel's upstream knows. */
export function upstreamModelFor(channel: ContentChannel, model: string): string {
  return channel.modelMapping[model] ?? model;
}

function quotaFor<C extends ContentChannel>(deps: ContentRelayDeps<C>, plan: Plan<C>, usage: TokenUsage, channel: C) {
  return quotaForTokens(usage, plan.price, {
    groupRatio: plan.groupRatio,
    channelRatio: channel.priceRatio,
    quotaPerUnit: deps.quotaPerUnit,
  });
}

function logRow<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
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
 * Checks that the model can be served and billed, orders the channels and charges the estimate
 * (prompt estimate + the most output allowed) at the first channel's ratio.
 */
async function begin<C extends ContentChannel>(deps: ContentRelayDeps<C>, call: ContentCall): Promise<Plan<C>> {
  const startedAt = (deps.now ?? Date.now)();
  const { model, caller } = call;
  try {
    if (!(await deps.channels.isKnownModel(model))) {
      throw new GatewayError("GW_ERR_NOT_FOUND", `models/${model} is not found for API version v1beta.`);
    }
    const price = await deps.prices.contentPrice(model);
    if (!price) {
      throw new GatewayError("GW_ERR_ACTION_UNAVAILABLE", `Model "${model}" has no price set, so it cannot be used.`);
    }
    const candidates = await deps.channels.candidates(model, caller.group);
    if (candidates.length === 0) {
      throw new GatewayError("GW_ERR_NO_CHANNEL", `No enabled channel serves model "${model}" right now.`);
    }
    const ordered = orderChannels(candidates);
    const groupRatio = await deps.prices.groupRatio(caller.group);
    const estimate = chargeUsage(call.body, deps.defaultMaxOutputTokens);
    const plan: Plan<C> = { ordered, price, groupRatio, promptEstimate: estimate.promptTokens, startedAt };
    const amount = quotaFor(deps, plan, estimate, ordered[0] as C);
    await deps.ledger.charge({
      userId: caller.userId,
      tokenId: caller.tokenId,
      amount,
      reference: call.reference,
      note: `estimate for ${model}, request ${call.requestId}`,
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

/** Settles (or refunds) the charge once, and writes the call's request-log row. Never throws. */
async function finish<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
  plan: Plan<C>,
  outcome: Outcome<C>,
): Promise<void> {
  const settlement = settlementFor(outcome.account, plan.promptEstimate);
  let quota = 0;
  let usage: TokenUsage | null = null;
  try {
    if (settlement.kind === "refund") {
      await deps.ledger.refund(call.reference, "nothing was produced");
    } else {
      usage = settlement.usage;
      quota = quotaFor(deps, plan, usage, outcome.channel ?? (plan.ordered[0] as C));
      await deps.ledger.settle(call.reference, quota, settlement.estimated ? "estimated usage" : "reported usage");
      if (settlement.estimated) {
        deps.log.warn(
          { requestId: call.requestId, model: call.model, usage },
          "content usage estimated from the text produced: the upstream reported none",
        );
      }
    }
  } catch (err) {
    deps.log.error(
      { requestId: call.requestId, err, reference: call.reference },
      "content charge could not be settled; it stays at the estimate",
    );
  }
  logRow(deps, call, plan.startedAt, {
    channelId: outcome.channel ? outcome.channel.id : null,
    usage,
    quota,
    status: outcome.status,
    error: outcome.error,
  });
}

/**
 * Reports each attempt's outcome for channel health, except when the client went away: an
 * upstream call aborted on the client's behalf says nothing about the channel.
 */
function reporter<C extends ContentChannel>(deps: ContentRelayDeps<C>, call: ContentCall) {
  return ({ channel, error }: { channel: C; error: UpstreamError | null }) => {
    if (call.signal.aborted) return;
    deps.channels.report(channel, error);
  };
}

/** An attempt that failed because the client left: not retried on another channel. */
function unlessClientLeft(call: ContentCall, err: unknown): unknown {
  return call.signal.aborted ? new UpstreamError("refused", "The client closed the request.", { cause: err }) : err;
}

/** The error of a call that failed before anything reached the client. */
function failedCall(call: ContentCall, err: unknown, outcome: Outcome<unknown>): GatewayError {
  const error = call.signal.aborted ? new GatewayError("GW_ERR_BAD_REQUEST", "The client closed the request.") : null;
  const gw = error ?? toContentError(err);
  outcome.status = error ? CLIENT_CLOSED : gw.status;
  outcome.error = gw.message;
  return gw;
}

/** `:generateContent`: relays one call with failover and bills its reported usage. */
export async function generateContentCall<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
): Promise<ContentChunk> {
  const plan = await begin(deps, call);
  const outcome: Outcome<C> = { channel: null, account: new ContentAccount(), status: 200, error: null };
  try {
    const { result, channel } = await withFailover(
      plan.ordered,
      { maxAttempts: deps.maxChannelAttempts },
      async (ch) => {
        const release = await deps.channels.acquire(ch);
        try {
          return await deps.upstream.generate(ch, upstreamModelFor(ch, call.model), call.body, call.signal);
        } catch (err) {
          throw unlessClientLeft(call, err);
        } finally {
          release();
        }
      },
      reporter(deps, call),
    );
    outcome.channel = channel;
    outcome.account.observe(result.value);
    return result;
  } catch (err) {
    throw failedCall(call, err, outcome);
  } finally {
    await finish(deps, call, plan, outcome);
  }
}

/**
 * `:streamGenerateContent`: opens the stream with failover (until its first chunk arrived), then
 * writes every chunk to the sink as it comes. A failure after that ends the answer with an error
 * event; a client that goes away aborts the upstream call. What was produced is billed, and the
 * answer ends (cleanly or with its error event) only after the call is settled.
 *
 * Throws a GatewayError only when nothing was written to the sink.
 */
export async function streamContentCall<C extends ContentChannel>(
  deps: ContentRelayDeps<C>,
  call: ContentCall,
  sink: ContentSink,
): Promise<void> {
  const plan = await begin(deps, call);
  const outcome: Outcome<C> = { channel: null, account: new ContentAccount(), status: 200, error: null };
  let releaseSlot: (() => void) | null = null;
  // The answer is ended only once the call is settled: a client that sees the end sees its balance.
  // "end": a clean end; an error: an error event, then the end; null: nothing more to write.
  let ending: "end" | GatewayError | null = null;
  try {
    let opened: { result: OpenedContentStream & { release: () => void }; channel: C };
    try {
      opened = await withFailover(
        plan.ordered,
        { maxAttempts: deps.maxChannelAttempts },
        async (ch) => {
          // The channel's slot is held for the whole stream, not only until its first chunk.
          const release = await deps.channels.acquire(ch);
          try {
            const signal = deps.stopping ? AbortSignal.any([call.signal, deps.stopping]) : call.signal;
            const stream = await deps.upstream.openStream(ch, upstreamModelFor(ch, call.model), call.body, signal);
            return { first: stream.first, rest: stream.rest, release };
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
    const { first, rest } = opened.result;
    try {
      outcome.account.observe(first.value);
      await sink.event(first);
      for await (const chunk of rest) {
        outcome.account.observe(chunk.value);
        await sink.event(chunk);
      }
      if (call.signal.aborted) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else if (!outcome.account.complete) {
        // A stream that stops without its final chunk is cut, however cleanly it closed.
        throw new UpstreamError("retryable", "The upstream ended the stream before the answer was complete.");
      } else {
        ending = "end";
      }
    } catch (err) {
      if (call.signal.aborted) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else {
        const error = deps.stopping?.aborted ? new GatewayError("GW_ERR_SHUTTING_DOWN") : toContentError(err);
        outcome.status = error.status;
        outcome.error = error.message;
        deps.log.warn({ requestId: call.requestId, err }, "content stream failed after its first event");
        ending = error;
      }
      await rest.return(undefined);
    }
  } finally {
    releaseSlot?.();
    await finish(deps, call, plan, outcome);
    if (ending === "end") await sink.end();
    else if (ending) await sink.fail(ending);
  }
}
