import { clientLeft, endsWithStop } from "../call-signal.js";
import { orderChannels } from "../channel-selection.js";
import { GatewayError } from "../errors.js";
import { withFailover } from "../failover.js";
import { UpstreamError } from "../upstream-error.js";
import {
  explainRefusedHold,
  finish,
  logRow,
  type Outcome,
  type Plan,
  progressRecorder,
  quotaFor,
} from "./call-billing.js";
import { estimatePromptTokens } from "./estimate.js";
import { holdUsage } from "./hold.js";
import { modelLimits } from "./model-limits.js";
import type {
  ContentCall,
  ContentChannel,
  ContentChunk,
  ContentRelayDeps,
  ContentSink,
  OpenedContentStream,
  UpstreamBody,
} from "./ports.js";
import { toContentError } from "./upstream-failure.js";
import { ContentAccount } from "./usage.js";

/** Status logged for a call the client abandoned. */
export const CLIENT_CLOSED = 499;

/** What goes upstream: the client's own JSON text when it may go as it is. */
function upstreamBody(call: ContentCall): UpstreamBody {
  return call.bodyText === undefined ? { value: call.body } : { value: call.body, text: call.bodyText };
}

/** The model name the channel's upstream knows. */
export function upstreamModelFor(channel: ContentChannel, model: string): string {
  return channel.modelMapping[model] ?? model;
}

/**
 * Checks that the model can be served and billed, orders the channels and holds the most the call
 * can cost (see hold.ts) at the dearest candidate's ratio: a balance (down to minus its credit
 * line) or a token's limit that does not cover it refuses the call before any upstream call.
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
    const worst = holdUsage(call.body, call.bodyBytes, modelLimits(model, deps.modelDefaults));
    const plan: Plan<C> = {
      label: "content",
      ordered,
      price,
      groupRatio,
      promptEstimate: estimatePromptTokens(call.body),
      startedAt,
    };
    // Failover may land on any candidate: the hold is at the dearest ratio among them.
    const dearest = ordered.reduce((a, b) => (b.priceRatio > a.priceRatio ? b : a));
    const amount = quotaFor(deps, plan, worst, dearest);
    if (!Number.isSafeInteger(amount)) {
      throw new GatewayError("GW_ERR_VALIDATION", "generationConfig asks for more output than can be charged.", {
        param: "generationConfig",
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
      throw explainRefusedHold(err, amount, worst);
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

/**
 * Reports each attempt's outcome for channel health, except when the client went away: an
 * upstream call aborted on the client's behalf says nothing about the channel.
 */
export function reporter<C extends ContentChannel>(
  deps: { channels: Pick<ContentRelayDeps<C>["channels"], "report"> },
  call: Pick<ContentCall, "signal" | "caller">,
) {
  return ({ channel, error }: { channel: C; error: UpstreamError | null }) => {
    if (clientLeft(call.signal)) return;
    deps.channels.report(channel, error, call.caller.userId);
  };
}

/** An attempt that failed because the client left: not retried on another channel. */
export function unlessClientLeft(call: Pick<ContentCall, "signal">, err: unknown): unknown {
  return clientLeft(call.signal) ? new UpstreamError("refused", "The client closed the request.", { cause: err }) : err;
}

/** The error of a call that failed before anything reached the client. */
export function failedCall(
  call: Pick<ContentCall, "signal">,
  err: unknown,
  outcome: Pick<Outcome<unknown>, "status" | "error">,
): GatewayError {
  const error = clientLeft(call.signal)
    ? new GatewayError("GW_ERR_BAD_REQUEST", "The client closed the request.")
    : null;
  const gw = error ?? toContentError(err);
  outcome.status = error ? CLIENT_CLOSED : gw.status;
  outcome.error = gw.message;
  return gw;
}

/**
 * The signal of an upstream stream: aborted when the client goes away, and when the gateway
 * stops and its drain window is over.
 */
export function streamSignal(
  deps: Pick<ContentRelayDeps<ContentChannel>, "stopping">,
  call: Pick<ContentCall, "signal">,
) {
  if (!deps.stopping || endsWithStop(call.signal, deps.stopping)) return call.signal;
  return AbortSignal.any([call.signal, deps.stopping]);
}

/**
 * A stream that failed after its first event: records why on the outcome, and returns the error
 * event the answer ends with (a stop of the gateway is told as such), or null when the client
 * left and nothing more is written.
 */
export function brokenStream(
  deps: Pick<ContentRelayDeps<ContentChannel>, "stopping" | "log">,
  call: Pick<ContentCall, "signal" | "requestId">,
  outcome: Pick<Outcome<unknown>, "status" | "error">,
  err: unknown,
  label: string,
): GatewayError | null {
  if (clientLeft(call.signal)) {
    outcome.status = CLIENT_CLOSED;
    outcome.error = "The client closed the request.";
    return null;
  }
  const error = deps.stopping?.aborted ? new GatewayError("GW_ERR_SHUTTING_DOWN") : toContentError(err);
  outcome.status = error.status;
  outcome.error = error.message;
  deps.log.warn({ requestId: call.requestId, err }, `${label} stream failed after its first event`);
  return error;
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
          return await deps.upstream.generate(ch, upstreamModelFor(ch, call.model), upstreamBody(call), call.signal);
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
            const signal = streamSignal(deps, call);
            const stream = await deps.upstream.openStream(
              ch,
              upstreamModelFor(ch, call.model),
              upstreamBody(call),
              signal,
            );
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
    const recordProgress = progressRecorder(deps, call, plan, outcome);
    try {
      outcome.account.observe(first.value);
      await sink.event(first);
      for await (const chunk of rest) {
        outcome.account.observe(chunk.value);
        recordProgress();
        await sink.event(chunk);
      }
      if (clientLeft(call.signal)) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else if (!outcome.account.complete) {
        // A stream that stops without its final chunk is cut, however cleanly it closed.
        throw new UpstreamError("retryable", "The upstream ended the stream before the answer was complete.");
      } else {
        ending = "end";
      }
    } catch (err) {
      ending = brokenStream(deps, call, outcome, err, "content");
      await rest.return(undefined);
    }
  } finally {
    if (releaseSlot) {
      releaseSlot();
      // The stream was opened: its last events may wait for the settlement to leave with the end.
      sink.settling();
    }
    await finish(deps, call, plan, outcome);
    if (ending === "end") await sink.end();
    else if (ending) await sink.fail(ending);
  }
}
