import type { GatewayError } from "../errors.js";
import { brokenStream, endOfStream, failedCall, streamSignal, upstreamModelFor } from "./call-errors.js";
import type { CallKind, MeteredAccount } from "./call-kind.js";
import { finish, type Outcome, progressRecorder } from "./finish.js";
import { acrossChannels, type Send } from "./once.js";
import { planCall } from "./plan.js";
import type { MeteredCall, MeteredChannel, MeteredSink, MeteringDeps, OpenedStream } from "./ports.js";

/**
 * A streamed call: planned and held (plan.ts), its stream opened with failover until its first
 * event arrived (the channel's slot is held for the whole stream), then every event written to
 * the sink as it comes, its usage recorded on the open charge as it grows. A failure after the
 * first event ends the answer with an error event; a client that goes away aborts the upstream
 * call. The end is written only after the call is settled: the last event, then `settling()`,
 * the settlement, then the end (or the error event), so a client that sees the end sees its
 * balance. `closing` is what the sink's end is told (such as the usage billed).
 *
 * Throws a GatewayError only when nothing was written to the sink.
 */
export async function meterStream<
  Call extends MeteredCall,
  Sent,
  P,
  U,
  Acc extends MeteredAccount<E, unknown>,
  C extends MeteredChannel,
  E,
  Z,
>(
  deps: MeteringDeps<C, P>,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  call: Call,
  open: Send<C, Sent, OpenedStream<E>>,
  sink: MeteredSink<E, Z>,
  closing: (account: Acc, usage: U | null) => Z,
): Promise<void> {
  const plan = await planCall(deps, kind, call);
  const outcome: Outcome<C, Acc> = { channel: null, tried: null, account: kind.account(), status: 200, error: null };
  let releaseSlot: (() => void) | null = null;
  // "end": a clean end; an error: an error event, then the end; null: nothing more to write.
  let ending: "end" | GatewayError | null = null;
  try {
    let opened: { result: OpenedStream<E> & { release: () => void }; channel: C };
    try {
      // The channel's slot is held for the whole stream, not only until its first event.
      opened = await acrossChannels(deps, call, plan.ordered, outcome, async (ch, release) => {
        try {
          const stream = await open(ch, upstreamModelFor(ch, call.model), plan.request, streamSignal(deps, call));
          return { first: stream.first, rest: stream.rest, release };
        } catch (err) {
          release();
          throw err;
        }
      });
    } catch (err) {
      throw failedCall(kind, call, err, outcome);
    }
    releaseSlot = opened.result.release;
    outcome.channel = opened.channel;
    const { first, rest } = opened.result;
    const account = outcome.account;
    const recordProgress = progressRecorder(deps, kind, call, plan, outcome);
    try {
      account.observe(first);
      await sink.event(first);
      for await (const event of rest) {
        account.observe(event);
        recordProgress();
        await sink.event(event);
      }
      ending = endOfStream(call, outcome, account.complete);
    } catch (err) {
      ending = brokenStream(deps, call, outcome, err, kind.label);
      await rest.return(undefined);
    }
  } finally {
    if (releaseSlot) {
      releaseSlot();
      // The stream was opened: its last events may wait for the settlement to leave with the end.
      sink.settling();
    }
    const usage = await finish(deps, kind, call, plan, outcome);
    if (ending === "end") await sink.end(closing(outcome.account, usage));
    else if (ending) await sink.fail(ending);
  }
}
