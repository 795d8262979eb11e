import { GatewayError } from "../errors.js";

/** Why a code credited nothing. */
export type RedemptionRefusal = "unknown" | "used" | "expired" | "disabled" | "limit_reached";

/** The error of each refusal (each surface renders it in its own shape), naming the field `code`. */
export function redemptionRefused(reason: RedemptionRefusal): GatewayError {
  const param = "code";
  switch (reason) {
    case "unknown":
      return new GatewayError("GW_ERR_REDEMPTION_UNKNOWN", undefined, { param });
    case "used":
      return new GatewayError("GW_ERR_REDEMPTION_USED", undefined, { param });
    case "expired":
      return new GatewayError("GW_ERR_REDEMPTION_EXPIRED", undefined, { param });
    case "disabled":
      return new GatewayError("GW_ERR_REDEMPTION_DISABLED", undefined, { param });
    case "limit_reached":
      return new GatewayError("GW_ERR_REDEMPTION_LIMIT", undefined, { param });
  }
}
