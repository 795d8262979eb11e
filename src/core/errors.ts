/** An error of the registry: its HTTP status, its stable code and its default message. */
function error(status: number, code: string, message: string): ErrorDef {
  return { status, code, message };
}

/** What the registry says of one error. */
export interface ErrorDef {
  status: number;
  code: string;
  message: string;
}

/**
 * The one registry of gateway errors. Every error the gateway itself raises has a stable code,
 * an HTTP status and a default message; each public surface renders it in its own body shape
 * (see `http/surfaces.ts`).
 */
export const ERRORS = {
  GW_ERR_BAD_REQUEST: error(400, "invalid_request", "The request is invalid."),
  GW_ERR_INVALID_JSON: error(400, "invalid_json", "The body is not valid JSON."),
  GW_ERR_VALIDATION: error(400, "invalid_request", "A field is invalid."),
  GW_ERR_UNAUTHENTICATED: error(401, "unauthenticated", "Missing or invalid credentials."),
  GW_ERR_TOKEN_EXPIRED: error(401, "token_expired", "The token has expired."),
  GW_ERR_TOKEN_DISABLED: error(401, "token_disabled", "The token is disabled."),
  GW_ERR_USER_DISABLED: error(403, "user_disabled", "The account is disabled."),
  GW_ERR_IP_NOT_ALLOWED: error(403, "ip_not_allowed", "The token may not be used from this address."),
  GW_ERR_MODEL_NOT_ALLOWED: error(403, "model_not_allowed", "The token may not use this model."),
  GW_ERR_INSUFFICIENT_QUOTA: error(403, "insufficient_quota", "Not enough quota for this request."),
  GW_ERR_TOKEN_QUOTA_EXCEEDED: error(
    403,
    "token_quota_exceeded",
    "The token's quota limit does not cover this request.",
  ),
  GW_ERR_ACTION_UNAVAILABLE: error(403, "action_unavailable", "This action is currently unavailable."),
  GW_ERR_METRICS_KEY_REQUIRED: error(
    403,
    "metrics_key_required",
    "Metrics are served only with METRICS_KEY on a gateway that listens beyond loopback.",
  ),
  GW_ERR_ADMIN_UNAUTHENTICATED: error(401, "unauthenticated", "Missing or invalid admin key."),
  GW_ERR_INVALID_CREDENTIALS: error(401, "invalid_credentials", "The name or the password is wrong."),
  GW_ERR_CSRF: error(403, "csrf_failed", "The x-csrf-token header is missing or does not match the session."),
  GW_ERR_FORBIDDEN: error(403, "forbidden", "This account may not do that."),
  GW_ERR_NOT_FOUND: error(404, "not_found", "Not found."),
  GW_ERR_ROUTE_NOT_FOUND: error(404, "route_not_found", "No such route."),
  GW_ERR_METHOD_NOT_ALLOWED: error(405, "method_not_allowed", "Method not allowed."),
  GW_ERR_CONFLICT: error(409, "conflict", "The request conflicts with the current state."),
  GW_ERR_IDEMPOTENCY_MISMATCH: error(
    409,
    "idempotency_key_reused",
    "This Idempotency-Key was used with a different request.",
  ),
  GW_ERR_IDEMPOTENCY_IN_PROGRESS: error(
    409,
    "idempotency_in_progress",
    "A request with this Idempotency-Key is still in progress; retry shortly.",
  ),
  GW_ERR_REDEMPTION_UNKNOWN: error(404, "redemption_code_unknown", "No such redemption code."),
  GW_ERR_REDEMPTION_USED: error(409, "redemption_code_used", "This redemption code was already redeemed."),
  GW_ERR_REDEMPTION_EXPIRED: error(410, "redemption_code_expired", "This redemption code has expired."),
  GW_ERR_REDEMPTION_DISABLED: error(403, "redemption_code_disabled", "This redemption code is disabled."),
  GW_ERR_REDEMPTION_LIMIT: error(
    409,
    "redemption_limit_reached",
    "This account has redeemed as many codes of this batch as it may.",
  ),
  GW_ERR_BODY_TOO_LARGE: error(413, "body_too_large", "The body is too large."),
  GW_ERR_BODY_TOO_DEEP: error(400, "body_too_deep", "The body is nested too deeply."),
  GW_ERR_UNSUPPORTED_MEDIA_TYPE: error(415, "unsupported_media_type", "The body must be application/json."),
  GW_ERR_RATE_LIMITED: error(429, "rate_limited", "Too many requests."),
  GW_ERR_INTERNAL: error(500, "internal_error", "Internal error."),
  GW_ERR_UPSTREAM: error(502, "upstream_error", "The upstream failed."),
  GW_ERR_NO_CHANNEL: error(503, "no_channel_available", "No upstream channel is available for this request."),
  GW_ERR_BUSY: error(503, "busy", "The gateway is busy; retry shortly."),
  GW_ERR_SHUTTING_DOWN: error(
    503,
    "shutting_down",
    "The gateway is shutting down: the answer was cut at the end of its drain window.",
  ),
  GW_ERR_UPSTREAM_TIMEOUT: error(504, "upstream_timeout", "The upstream timed out."),
} as const satisfies Record<string, ErrorDef>;

export type ErrorName = keyof typeof ERRORS;

export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly status: number;
  readonly code: string;
  readonly errorName: ErrorName;
  /** The request field at fault, where there is one (`body.prompt`, `ids[3]`...). */
  readonly param: string | null;
  /** Extra headers to send with the error (Retry-After...). */
  readonly headers: Record<string, string>;

  constructor(
    errorName: ErrorName,
    message?: string,
    options: { param?: string | null; status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    const def = ERRORS[errorName];
    super(message ?? def.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorName = errorName;
    this.status = options.status ?? def.status;
    this.code = def.code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}
