import type { UpstreamError } from "../core/upstream-error.js";
import type { GatewayMetrics, UpstreamOutcome } from "./registry.js";

/** The outcome label of an upstream call: `ok`, or the class of its error. */
export function upstreamOutcome(error: UpstreamError | null): UpstreamOutcome {
  return error === null ? "ok" : error.kind;
}

/**
 * Counts one upstream call. Fits the `report` callback of `withFailover`:
 * `({ channel, error }) => countUpstreamCall(ctx.metrics, channel, error)`.
 */
export function countUpstreamCall(
  metrics: GatewayMetrics,
  channel: { id: number; type: string },
  error: UpstreamError | null,
): void {
  metrics.upstreamCalls.inc({ channel: String(channel.id), type: channel.type, outcome: upstreamOutcome(error) });
}
