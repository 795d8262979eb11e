/**
 * The one registry of gateway errors. Every error the gateway itself raises has a stable code,
 * an HTTP status and a default message; each public surface renders it in its own body shape
 * (see `api/surfaces.ts`).
 */
export const ERRORS = {
  GW_ERR_BAD_REQUEST: { status: 400, code: "invalid_request", message: "The request is invalid." },
  GW_ERR_INVALID_JSON: { status: 400, code: "invalid_json", message: "The body is not valid JSON." },
  GW_ERR_VALIDATION: { status: 400, code: "invalid_request", message: "A field is invalid." },
  GW_ERR_UNAUTHENTICATED: {
    status: 401,
    code: "unauthenticated",
    message: "Missing or invalid credentials.",
  },
  GW_ERR_TOKEN_EXPIRED: { status: 401, code: "token_expired", message: "The token has expired." },
  GW_ERR_TOKEN_DISABLED: { status: 401, code: "token_disabled", message: "The token is disabled." },
  GW_ERR_USER_DISABLED: { status: 403, code: "user_disabled", message: "The account is disabled." },
  GW_ERR_IP_NOT_ALLOWED: {
    status: 403,
    code: "ip_not_allowed",
    message: "The token may not be used from this address.",
  },
  GW_ERR_MODEL_NOT_ALLOWED: {
    status: 403,
    code: "model_not_allowed",
    message: "The token may not use this model.",
  },
  GW_ERR_INSUFFICIENT_QUOTA: {
    status: 403,
    code: "insufficient_quota",
    message: "Not enough quota for this request.",
  },
  GW_ERR_TOKEN_QUOTA_EXCEEDED: {
    status: 403,
    code: "token_quota_exceeded",
    message: "The token's quota limit does not cover this request.",
  },
  GW_ERR_ACTION_UNAVAILABLE: {
    status: 403,
    code: "action_unavailable",
    message: "This action is currently unavailable.",
  },
  GW_ERR_METRICS_KEY_REQUIRED: {
    status: 403,
    code: "metrics_key_required",
    message: "Metrics are served only with METRICS_KEY on a gateway that listens beyond loopback.",
  },
  GW_ERR_ADMIN_UNAUTHENTICATED: {
    status: 401,
    code: "unauthenticated",
    message: "Missing or invalid admin key.",
  },
  GW_ERR_INVALID_CREDENTIALS: {
    status: 401,
    code: "invalid_credentials",
    message: "The name or the password is wrong.",
  },
  GW_ERR_CSRF: {
    status: 403,
    code: "csrf_failed",
    message: "The x-csrf-token header is missing or does not match the session.",
  },
  GW_ERR_FORBIDDEN: { status: 403, code: "forbidden", message: "This account may not do that." },
  GW_ERR_NOT_FOUND: { status: 404, code: "not_found", message: "Not found." },
  GW_ERR_ROUTE_NOT_FOUND: { status: 404, code: "route_not_found", message: "No such route." },
  GW_ERR_METHOD_NOT_ALLOWED: { status: 405, code: "method_not_allowed", message: "Method not allowed." },
  GW_ERR_CONFLICT: { status: 409, code: "conflict", message: "The request conflicts with the current state." },
  GW_ERR_IDEMPOTENCY_MISMATCH: {
    status: 409,
    code: "idempotency_key_reused",
    message: "This Idempotency-Key was used with a different request.",
  },
  GW_ERR_IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    code: "idempotency_in_progress",
    message: "A request with this Idempotency-Key is still in progress; retry shortly.",
  },
  GW_ERR_BODY_TOO_LARGE: { status: 413, code: "body_too_large", message: "The body is too large." },
  GW_ERR_BODY_TOO_DEEP: { status: 400, code: "body_too_deep", message: "The body is nested too deeply." },
  GW_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "The body must be application/json.",
  },
  GW_ERR_RATE_LIMITED: { status: 429, code: "rate_limited", message: "Too many requests." },
  GW_ERR_INTERNAL: { status: 500, code: "internal_error", message: "Internal error." },
  GW_ERR_UPSTREAM: { status: 502, code: "upstream_error", message: "The upstream failed." },
  GW_ERR_NO_CHANNEL: {
    status: 503,
    code: "no_channel_available",
    message: "No upstream channel is available for this request.",
  },
  GW_ERR_BUSY: {
    status: 503,
    code: "busy",
    message: "The gateway is busy; retry shortly.",
  },
  GW_ERR_SHUTTING_DOWN: {
    status: 503,
    code: "shutting_down",
    message: "The gateway is shutting down: the answer was cut at the end of its drain window.",
  },
  GW_ERR_UPSTREAM_TIMEOUT: { status: 504, code: "upstream_timeout", message: "The upstream timed out." },
} as const satisfies Record<string, { status: number; code: string; message: string }>;

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
