import { clientLeft } from "../call-signal.js";
import { finish, progressRecorder } from "../content/call-billing.js";
import {
  brokenStream,
  CLIENT_CLOSED,
  failedCall,
  reporter,
  streamSignal,
  unlessClientLeft,
  upstreamModelFor,
} from "../content/relay.js";
import type { GatewayError } from "../errors.js";
import { withFailover } from "../failover.js";
import type { TokenUsage } from "../pricing.js";
import { UpstreamError } from "../upstream-error.js";
import { ChatAccount } from "./account.js";
import { begin, type Outcome } from "./call-lifecycle.js";
import type { ChatAnswer, ChatEvent } from "./canonical.js";
import type { ChatCall, ChatChannel, ChatRelayDeps, ChatSink } from "./ports.js";

// The chat relay shares the content relay's rules: failover, health reports, the client leaving,
// the gateway stopping, and its billing (content/call-billing.ts).

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
              .openStream(ch, upstreamModelFor(ch, call.model), plan.request, streamSignal(deps, call));
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
    const recordProgress = progressRecorder(deps, call, plan, outcome);
    try {
      outcome.account.observe(first);
      await sink.event(first);
      for await (const event of events) {
        outcome.account.observe(event);
        recordProgress();
        await sink.event(event);
      }
      if (clientLeft(call.signal)) {
        outcome.status = CLIENT_CLOSED;
        outcome.error = "The client closed the request.";
      } else if (!outcome.account.complete) {
        throw new UpstreamError("retryable", "The upstream ended the stream before the answer was complete.");
      } else {
        ending = "end";
      }
    } catch (err) {
      ending = brokenStream(deps, call, outcome, err, "chat");
      await events.return(undefined);
    }
  } finally {
    if (releaseSlot) {
      releaseSlot();
      // The stream was opened: its last events may wait for the settlement to leave with the end.
      sink.settling();
    }
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
