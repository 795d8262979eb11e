import { isUpstreamError, UpstreamError } from "./upstream-error.js";

export interface FailoverOptions {
  /** Most channels tried for one request (the first one included). */
  maxAttempts: number;
}

export interface AttemptReport<C> {
  channel: C;
  error: UpstreamError | null;
}

/**
 * Tries `attempt` on each channel in order until one succeeds. Only a `retryable` error (or an
 * `auth` error: that channel is broken, not the request) that has not yet reached the client
 * moves on to the next channel; anything else is thrown at once. `report` hears every outcome,
 * for channel health. The last error is thrown when every attempt failed.
 */
export async function withFailover<C, T>(
  ordered: readonly C[],
  options: FailoverOptions,
  attempt: (channel: C, index: number) => Promise<T>,
  report?: (outcome: AttemptReport<C>) => void,
): Promise<{ result: T; channel: C }> {
  let last: unknown;
  const tries = Math.min(ordered.length, Math.max(1, options.maxAttempts));
  for (let i = 0; i < tries; i++) {
    const channel = ordered[i] as C;
    try {
      const result = await attempt(channel, i);
      report?.({ channel, error: null });
      return { result, channel };
    } catch (err) {
      last = err;
      if (!isUpstreamError(err)) throw err;
      report?.({ channel, error: err });
      if (err.committed || err.kind === "refused") throw err;
    }
  }
  throw last ?? new UpstreamError("retryable", "no channel was tried");
}
