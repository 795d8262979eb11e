/**
 * A signal that aborts with a `TimeoutError` after `ms`, held alive by its own timer until then.
 *
 * `AbortSignal.timeout()` keeps only a weak hold on its signal: once nothing else references it
 * (for example when it is only a source of `AbortSignal.any()` handed to an HTTP client), it can
 * be collected and never fire, and a call meant to end at its deadline waits forever. The timer
 * here holds the controller until it fires; it is unref'd, so it never keeps a process alive.
 */
export function deadlineSignal(ms: number): AbortSignal {
  return deadline(ms).signal;
}

/** A deadline whose timer can be cleared once the work it bounds has ended. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Ends the timer: the signal never fires. Safe to call more than once. */
  clear(): void;
}

/**
 * As deadlineSignal, with a `clear` for the work that ends before its deadline. A timer left
 * running holds its controller (and every signal combined with it) until it fires: with a call
 * deadline of minutes, a busy gateway would keep hundreds of thousands of them alive.
 */
export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
