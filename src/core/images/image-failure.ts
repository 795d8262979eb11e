import { GatewayError } from "../errors.js";
import { publicUpstreamReason, type UpstreamError } from "../upstream-error.js";
import { isImageNotReturned } from "./no-image-error.js";

/** The client-facing error for an upstream failure (the charge is refunded by the caller). */
export function imageUpstreamFailure(err: UpstreamError): GatewayError {
  const refunded = "; the charge was refunded";
  if (isImageNotReturned(err)) {
    return err.blocked
      ? new GatewayError(
          "GW_ERR_BAD_REQUEST",
          `The image was not generated: the upstream blocked the request for safety reasons (${err.reason})${refunded}.`,
          { param: "prompt" },
        )
      : new GatewayError("GW_ERR_UPSTREAM", `The upstream answered without an image (${err.reason})${refunded}.`);
  }
  if (err.kind === "refused" && (err.status === 400 || err.status === 413 || err.status === 422)) {
    return new GatewayError(
      "GW_ERR_BAD_REQUEST",
      `The upstream refused the request: ${publicUpstreamReason(err.message).replace(/\.$/, "")}${refunded}.`,
    );
  }
  if (err.kind === "auth") {
    return new GatewayError("GW_ERR_UPSTREAM", `No upstream channel accepted the request${refunded}.`);
  }
  return new GatewayError(
    "GW_ERR_UPSTREAM",
    `The upstream failed: ${publicUpstreamReason(err.message).replace(/\.$/, "")}${refunded}.`,
  );
}
