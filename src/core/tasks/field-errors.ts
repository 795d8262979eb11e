import { GatewayError } from "../errors.js";

/** A 400 naming the body field: `body.<field> <message>`. */
export function invalid(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${message}`, { param: field });
}

/** True for an absent or whitespace-only text. */
export function blank(v: string | undefined): boolean {
  return v === undefined || v.trim() === "";
}
