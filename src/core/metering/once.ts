import { withFailover } from "../failover.js";
import { failedCall, reporter, unlessClientLeft, upstreamModelFor } from "./call-errors.js";
import type { CallKind, MeteredAccount } from "./call-kind.js";
import { finish, type Outcome } from "./finish.js";
import { planCall } from "./plan.js";
import type { MeteredCall, MeteredChannel, MeteringDeps } from "./ports.js";

/** One upstream call of a surface: its channel, the model name it knows, what goes, the signal. */
export type Send<C, Sent, A> = (channel: C, upstreamModel: string, request: Sent, signal: AbortSignal) => Promise<A>;

/**
 * Tries `ordered` in turn (see failover.ts), each attempt holding one of its channel's slots,
 * which `attempt` gives back; the last channel tried is kept on `outcome`. An attempt that failed
 * because the client left is not retried.
 */
export function acrossChannels<C extends MeteredChannel, T>(
  deps: Pick<MeteringDeps<C, unknown>, "channels" | "maxChannelAttempts">,
  call: MeteredCall,
  ordered: C[],
  outcome: { tried: C | null },
  attempt: (channel: C, release: () => void) => Promise<T>,
): Promise<{ result: T; channel: C }> {
  return withFailover(
    ordered,
    { maxAttempts: deps.maxChannelAttempts },
    async (ch) => {
      outcome.tried = ch;
      const release = await deps.channels.acquire(ch);
      try {
        return await attempt(ch, release);
      } catch (err) {
        throw unlessClientLeft(call, err);
      }
    },
    reporter(deps, call),
  );
}

/**
 * A call answered at once: planned and held (plan.ts), sent with failover (one channel slot per
 * attempt), its answer delivered (`deliver`: what the surface does with it before it is billed,
 * such as storing files; a failure there is the call's), then settled to what the answer used or
 * refunded (finish.ts). Returns the answer and the usage billed.
 */
export async function meterOnce<
  Call extends MeteredCall,
  Sent,
  P,
  U,
  Acc extends MeteredAccount<unknown, D>,
  C extends MeteredChannel,
  A,
  D = A,
>(
  deps: MeteringDeps<C, P>,
  kind: CallKind<Call, Sent, P, U, Acc, C>,
  call: Call,
  send: Send<C, Sent, A>,
  deliver?: (answer: A) => Promise<D>,
): Promise<{ answer: D; usage: U | null }> {
  const plan = await planCall(deps, kind, call);
  const outcome: Outcome<C, Acc> = { channel: null, tried: null, account: kind.account(), status: 200, error: null };
  let usage: U | null = null;
  let answer: D;
  try {
    const { result, channel } = await acrossChannels(deps, call, plan.ordered, outcome, async (ch, release) => {
      try {
        return await send(ch, upstreamModelFor(ch, call.model), plan.request, call.signal);
      } finally {
        release();
      }
    });
    outcome.channel = channel;
    answer = deliver ? await deliver(result) : (result as unknown as D);
    outcome.account.observeAnswer(answer);
  } catch (err) {
    throw failedCall(kind, call, err, outcome);
  } finally {
    usage = await finish(deps, kind, call, plan, outcome);
  }
  return { answer, usage };
}
