/** When a task is looked at next: pure timing rules of the poller. */

export interface PollTiming {
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  /** Shortest gap between two polls of one task the upstream allows (ms). */
  minIntervalMs?: number;
}

/**
 * Delay before the next poll. While the upstream answers, a task is polled every interval, so
 * a finished task is seen within one interval; after failed polls (errors, or the upstream not
 * knowing the id) the delay doubles per failure up to the maximum.
 */
export function nextPollDelay(consecutiveErrors: number, timing: PollTiming): number {
  const base = Math.max(timing.pollIntervalMs, timing.minIntervalMs ?? 0);
  if (consecutiveErrors <= 0) return base;
  const grown = base * 2 ** Math.min(consecutiveErrors, 20);
  return Math.max(base, Math.min(grown, timing.maxPollIntervalMs));
}

/** The moment (ms) a task submitted at `submitTime` (Unix seconds) runs out of time. */
export function taskDeadlineMs(submitTime: number, timeoutSeconds: number): number {
  return (submitTime + timeoutSeconds) * 1000;
}

/** Next poll time, never past the deadline (so a timeout is noticed on time). */
export function nextPollAt(nowMs: number, delayMs: number, deadlineMs: number): number {
  return Math.max(nowMs, Math.min(nowMs + delayMs, deadlineMs));
}
