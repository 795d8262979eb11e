import { UpstreamError } from "../core/upstream-error.js";

interface Slots {
  inUse: number;
  waiting: (() => void)[];
}

/**
 * Per-channel concurrency limits (a channel's `settings.concurrency`) within this instance. A
 * caller waits for a slot up to `maxWaitMs`; past that the channel counts as busy, a retryable
 * error, so failover moves on to another channel; a busy channel is not an unhealthy one, so the
 * error does not count against its health.
 */
export class ChannelSlots {
  private readonly slots = new Map<number, Slots>();

  constructor(private readonly maxWaitMs = 30_000) {}

  /** Takes a slot of the channel; returns the function that gives it back (call it once). */
  async acquire(channel: { id: number; settings: { concurrency?: number } }): Promise<() => void> {
    const limit = channel.settings.concurrency;
    if (!limit) return () => {};
    let s = this.slots.get(channel.id);
    if (!s) {
      s = { inUse: 0, waiting: [] };
      this.slots.set(channel.id, s);
    }
    const slots = s;
    if (slots.inUse >= limit) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          slots.waiting.splice(slots.waiting.indexOf(wake), 1);
          reject(
            new UpstreamError("retryable", `channel ${channel.id} is busy (${limit} calls in flight)`, {
              channelAtFault: false,
            }),
          );
        }, this.maxWaitMs);
        slots.waiting.push(wake);
      });
    } else {
      slots.inUse += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slots.waiting.shift();
      // The slot passes straight to the next waiter; otherwise it is freed.
      if (next) next();
      else slots.inUse -= 1;
    };
  }

  /** Calls in flight on a channel (for tests and metrics). */
  inUse(channelId: number): number {
    return this.slots.get(channelId)?.inUse ?? 0;
  }
}
