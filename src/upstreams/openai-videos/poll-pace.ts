/** Polls a second a channel gets when its `settings.pollsPerSecond` is unset. */
export const DEFAULT_POLLS_PER_SECOND = 10;

/**
 * Spaces the polls of each channel evenly at its rate (per instance): every poll takes the next
 * free moment of its channel and waits for it. A moment further away than `maxWaitMs` is not
 * taken; the caller is told to try later instead, so a backlog never holds leases for long.
 */
export class PollPace {
  private readonly nextFree = new Map<number, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Waits for the channel's next poll moment; false (nothing taken) when it is too far away. */
  async take(channelId: number, perSecond: number, maxWaitMs: number): Promise<boolean> {
    const now = this.now();
    const at = Math.max(now, this.nextFree.get(channelId) ?? 0);
    if (at - now > maxWaitMs) return false;
    this.nextFree.set(channelId, at + 1000 / perSecond);
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
    return true;
  }
}
