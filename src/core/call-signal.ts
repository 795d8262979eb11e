/** What a call's signal watches of the answer to its client (Node's ServerResponse has it). */
export interface AnswerToClient {
  once(event: "close", listener: () => void): unknown;
  readonly writableFinished: boolean;
}

/** The reason a stream's signal is aborted with when the gateway stops: not the client's leaving. */
const STOPPED = new DOMException("The gateway is stopping.", "AbortError");

/** The streams under way of each gateway (keyed by its stopping signal), each signal with its controller. */
const streamsUnderWay = new WeakMap<AbortSignal, Map<AbortSignal, AbortController>>();

function streamsOf(stopping: AbortSignal): Map<AbortSignal, AbortController> {
  let streams = streamsUnderWay.get(stopping);
  if (!streams) {
    const made = new Map<AbortSignal, AbortController>();
    stopping.addEventListener(
      "abort",
      () => {
        for (const controller of made.values()) controller.abort(STOPPED);
        made.clear();
      },
      { once: true },
    );
    streamsUnderWay.set(stopping, made);
    streams = made;
  }
  return streams;
}

/**
 * The signal of a client's call: aborted when the client goes away before its answer is complete
 * and, for a stream (`stopping` given: the gateway's signal that its stop's drain window is over),
 * when the gateway stops; `clientLeft` tells the two apart. One controller per call: a stream used
 * to combine a client signal and the stop's with `AbortSignal.any`, which made one more signal,
 * weak references and dependant sets for every stream (about 3% of a stream's CPU).
 */
export function callSignal(answer: AnswerToClient, stopping?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const signal = controller.signal;
  const streams = stopping ? streamsOf(stopping) : null;
  if (stopping?.aborted) controller.abort(STOPPED);
  else streams?.set(signal, controller);
  answer.once("close", () => {
    streams?.delete(signal);
    if (!answer.writableFinished) controller.abort();
  });
  return signal;
}

/** True when the call's signal was aborted because its client went away (not by a stop). */
export function clientLeft(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason !== STOPPED;
}

/** True when `signal` is a stream's signal that the gateway's stop (`stopping`) aborts already. */
export function endsWithStop(signal: AbortSignal, stopping: AbortSignal): boolean {
  return streamsUnderWay.get(stopping)?.has(signal) === true;
}
