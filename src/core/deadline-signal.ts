/**
 * A signal that aborts with a `TimeoutError` after `ms`, held alive by its own timer until then.
 *
 * `AbortSignal.timeout()` keeps only a weak hold on its signal: once nothing else references it
 * (for example when it is only a source of `AbortSignal.any()` handed to an HTTP client), it can
 * be collected and never fire, and a call meant to end at its deadline waits forever. The timer
 * here holds the controller until it fires; it is unref'd, so it never keeps a process alive.
 */
export function deadlineSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return controller.signal;
}
