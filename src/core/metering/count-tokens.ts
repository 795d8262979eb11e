import { orderChannels } from "../channel-selection.js";
import { upstreamModelFor } from "./call-errors.js";
import type { MeteredChannel, MeteringDeps } from "./ports.js";

/** A count of a request's input tokens: the upstream's own, or the gateway's estimate. */
export interface TokenCount<R> {
  result: R;
  /** The gateway's estimate: the chosen channel's vendor has no count endpoint, or its count failed. */
  estimated: boolean;
}

/** Who asks for a count, of which model. */
export interface CountAsk {
  requestId: string;
  model: string;
  group: string;
  signal: AbortSignal;
}

type CountDeps<C extends MeteredChannel> = {
  channels: Pick<MeteringDeps<C, unknown>["channels"], "candidates" | "acquire">;
  log: MeteringDeps<C, unknown>["log"];
};

/**
 * Counts a request's input tokens through the channel a call of the model would go to first
 * (the same routing: the caller's group, priorities and weights), by its vendor's count endpoint
 * (`count`, which answers null when the vendor has none). Free: nothing is held or billed. Falls
 * back to the gateway's `estimate` when no channel serves the model to the group, the vendor has
 * no count endpoint, or the upstream's count fails (logged); the result says which it is.
 */
export async function countInputTokens<C extends MeteredChannel, R>(
  deps: CountDeps<C>,
  ask: CountAsk,
  count: (channel: C, upstreamModel: string, signal: AbortSignal) => Promise<R | null>,
  estimate: () => R,
): Promise<TokenCount<R>> {
  const chosen = orderChannels(await deps.channels.candidates(ask.model, ask.group))[0];
  if (!chosen) return { result: estimate(), estimated: true };
  try {
    const release = await deps.channels.acquire(chosen);
    try {
      const counted = await count(chosen, upstreamModelFor(chosen, ask.model), ask.signal);
      if (counted !== null) return { result: counted, estimated: false };
    } finally {
      release();
    }
  } catch (err) {
    deps.log.warn(
      { requestId: ask.requestId, model: ask.model, channelId: chosen.id, err },
      "the upstream's token count failed: the gateway's estimate is answered",
    );
  }
  return { result: estimate(), estimated: true };
}
