/** A deadline whose timer can be cleared once the work it bounds has ended. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Ends the timer: the signal never fires. Safe to call more than once. */
  clear(): void;
}

/**
 * A signal that aborts with a `TimeoutError` after `ms`, held alive by its own timer until then,
 * and a `clear` for the work that ends before its deadline.
 *
 * `AbortSignal.timeout()` keeps only a weak hold on its signal: once nothing else references it
 * (for example when it is only a source of `AbortSignal.any()` handed to an HTTP client), it can
 * be collected and never fire, and a call meant to end at its deadline waits forever. The timer
 * here holds the controller until it fires or is cleared; it is unref'd, so it never keeps a
 * process alive. A timer left running would hold its controller (and every signal combined with
 * it) until it fires: with a call deadline of minutes, a busy gateway would keep hundreds of
 * thousands of them alive.
 *
 * With `follow` (a caller's signal), the deadline's signal is aborted by that one too, with its
 * reason, through one listener that `clear` removes: one controller per call instead of a
 * deadline joined to the caller's signal by `AbortSignal.any` (twice the cost).
 */
export function deadline(ms: number, follow?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  if (!follow) return { signal: controller.signal, clear: () => clearTimeout(timer) };
  const onAbort = () => controller.abort(follow.reason);
  if (follow.aborted) onAbort();
  else follow.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      follow.removeEventListener("abort", onAbort);
    },
  };
}
