import { clientLeft, endsWithStop } from "../call-signal.js";
import { GatewayError } from "../errors.js";
import { UpstreamError } from "../upstream-error.js";
import type { CallKind } from "./call-kind.js";
import type { MeteredCall, MeteredChannel, MeteringDeps } from "./ports.js";
import { toClientError } from "./upstream-failure.js";

// How a metered call's failures are told: to channel health, to the client, to the request log.

/** Status logged for a call the client abandoned. */
export const CLIENT_CLOSED = 499;

const CLIENT_CLOSED_MESSAGE = "The client closed the request.";

/** How a call's outcome is told in its request-log row. */
export interface Told {
  status: number;
  error: string | null;
}

/** The model name the channel's upstream knows. */
export function upstreamModelFor(channel: Pick<MeteredChannel, "modelMapping">, model: string): string {
  return channel.modelMapping[model] ?? model;
}

/**
 * Reports each attempt's outcome for channel health, except when the client went away: an
 * upstream call aborted on the client's behalf says nothing about the channel.
 */
export function reporter<C extends MeteredChannel>(
  deps: { channels: Pick<MeteringDeps<C, unknown>["channels"], "report"> },
  call: Pick<MeteredCall, "signal" | "caller">,
) {
  return ({ channel, error }: { channel: C; error: UpstreamError | null }) => {
    if (clientLeft(call.signal)) return;
    deps.channels.report(channel, error, call.caller.userId);
  };
}

/** An attempt that failed because the client left: not retried on another channel. */
export function unlessClientLeft(call: Pick<MeteredCall, "signal">, err: unknown): unknown {
  return clientLeft(call.signal) ? new UpstreamError("refused", CLIENT_CLOSED_MESSAGE, { cause: err }) : err;
}

/** The error of a call that failed before anything reached the client; told on `outcome`. */
export function failedCall(
  kind: Pick<CallKind<unknown, unknown, unknown, unknown, unknown, unknown>, "clientError" | "logsAttempt">,
  call: Pick<MeteredCall, "signal">,
  err: unknown,
  outcome: Told,
): GatewayError {
  if (clientLeft(call.signal)) {
    outcome.status = CLIENT_CLOSED;
    outcome.error = CLIENT_CLOSED_MESSAGE;
    return new GatewayError("GW_ERR_BAD_REQUEST", CLIENT_CLOSED_MESSAGE);
  }
  const error = kind.clientError ? kind.clientError(err) : toClientError(err);
  outcome.status = error.status;
  outcome.error = kind.logsAttempt ? ((err as Error)?.message?.slice(0, 500) ?? "unknown error") : error.message;
  return error;
}

/**
 * The signal of an upstream stream: aborted when the client goes away, and when the gateway
 * stops and its drain window is over.
 */
export function streamSignal(deps: Pick<MeteringDeps<MeteredChannel, unknown>, "stopping">, call: MeteredCall) {
  if (!deps.stopping || endsWithStop(call.signal, deps.stopping)) return call.signal;
  return AbortSignal.any([call.signal, deps.stopping]);
}

/**
 * A stream that failed after its first event: records why on the outcome, and returns the error
 * event the answer ends with (a stop of the gateway is told as such), or null when the client
 * left and nothing more is written.
 */
export function brokenStream(
  deps: Pick<MeteringDeps<MeteredChannel, unknown>, "stopping" | "log">,
  call: Pick<MeteredCall, "signal" | "requestId">,
  outcome: Told,
  err: unknown,
  label: string,
): GatewayError | null {
  if (clientLeft(call.signal)) {
    outcome.status = CLIENT_CLOSED;
    outcome.error = CLIENT_CLOSED_MESSAGE;
    return null;
  }
  const error = deps.stopping?.aborted ? new GatewayError("GW_ERR_SHUTTING_DOWN") : toClientError(err);
  outcome.status = error.status;
  outcome.error = error.message;
  deps.log.warn({ requestId: call.requestId, err }, `${label} stream failed after its first event`);
  return error;
}

/** A stream that ended without its last event while the client stayed: it was cut. */
export function endOfStream(call: Pick<MeteredCall, "signal">, outcome: Told, complete: boolean): "end" | null {
  if (clientLeft(call.signal)) {
    outcome.status = CLIENT_CLOSED;
    outcome.error = CLIENT_CLOSED_MESSAGE;
    return null;
  }
  // A stream that stops without its final event is cut, however cleanly it closed.
  if (!complete) throw new UpstreamError("retryable", "The upstream ended the stream before the answer was complete.");
  return "end";
}
