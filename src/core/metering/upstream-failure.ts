import { GatewayError } from "../errors.js";
import { isUpstreamError, type UpstreamError } from "../upstream-error.js";

/** Upstream statuses passed to the client as they are; any other failure becomes a 502. */
const RETRYABLE_PASSED_ON = new Set([429, 500, 503, 504]);
/** Refusals passed on with their status; any other 4xx refusal becomes a 400. */
const REFUSED_PASSED_ON = new Set([400, 404]);

/**
 * The error a client sees when every channel failed (or the failure may not be retried):
 * - `auth` (the channel's key was refused): the channel is at fault, not the client: 503;
 * - `refused`: the request itself was refused upstream: 400 (404 for an unknown upstream model);
 * - `retryable`: 429, 500, 503 and 504 keep their status; unreachable, broken off or other 5xx: 502.
 * Messages with an upstream status carry the upstream's own message (never a key or an address).
 */
export function clientErrorFor(err: UpstreamError): GatewayError {
  // Without an upstream status the message is the gateway's own and names the upstream address:
  // the client gets a plain one instead (the details go to the log).
  if (err.status === null) {
    return new GatewayError("GW_ERR_UPSTREAM", "The upstream could not be reached or broke off its answer.", {
      status: 502,
      cause: err,
    });
  }
  if (err.kind === "auth") {
    return new GatewayError(
      "GW_ERR_NO_CHANNEL",
      "The upstream refused the channel's credentials and no other channel could serve the request.",
      { status: 503, cause: err },
    );
  }
  if (err.kind === "refused") {
    const status = err.status !== null && REFUSED_PASSED_ON.has(err.status) ? err.status : 400;
    return new GatewayError("GW_ERR_UPSTREAM", `The upstream refused the request: ${err.message}`, {
      status,
      cause: err,
    });
  }
  if (err.status === 429) {
    return new GatewayError("GW_ERR_RATE_LIMITED", `The upstream is rate limited: ${err.message}`, { cause: err });
  }
  const status = err.status !== null && RETRYABLE_PASSED_ON.has(err.status) ? err.status : 502;
  return new GatewayError("GW_ERR_UPSTREAM", `The upstream failed: ${err.message}`, { status, cause: err });
}

/** Any failure of a metered call as the error the client sees. */
export function toClientError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (isUpstreamError(err)) return clientErrorFor(err);
  return new GatewayError("GW_ERR_INTERNAL", undefined, { cause: err });
}
