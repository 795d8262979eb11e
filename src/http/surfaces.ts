import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ERRORS, type ErrorName, GatewayError, isGatewayError } from "../core/errors.js";
import { isStoreBusy } from "../core/store-busy.js";
import { type Surface, withErrorResponses } from "./error-schemas.js";

export type { Surface };

const GOOGLE_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "INVALID_ARGUMENT",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  415: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/**
 * An error type for a status, by a surface's table of the statuses it names: any other status of
 * 500 or more is `server`, anything else an invalid request.
 */
function typeOf(named: Record<number, string>, server: string, status: number): string {
  return named[status] ?? (status >= 500 ? server : "invalid_request_error");
}

const OPENAI_TYPES: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  429: "rate_limit_error",
};

const openAiType = (status: number) => typeOf(OPENAI_TYPES, "server_error", status);

/** Anthropic's error types (529 is its "overloaded"). */
const ANTHROPIC_TYPES: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  503: "overloaded_error",
  529: "overloaded_error",
};

const anthropicType = (status: number) => typeOf(ANTHROPIC_TYPES, "api_error", status);

export function googleStatusWord(status: number): string {
  return GOOGLE_STATUS[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
}

/** The body of an error in a surface's shape. */
export function errorBody(surface: Surface, err: GatewayError): unknown {
  switch (surface) {
    case "envelope":
      return { code: err.code, message: err.message, data: null };
    case "openai":
      return { error: { message: err.message, type: openAiType(err.status), param: err.param, code: err.code } };
    case "google":
      return { error: { code: err.status, message: err.message, status: googleStatusWord(err.status) } };
    case "anthropic":
      return { type: "error", error: { type: anthropicType(err.status), message: err.message } };
    case "console":
      return { error: { code: err.code, message: err.message, ...(err.param ? { field: err.param } : {}) } };
  }
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/ids/3/name` -> `ids[3].name` */
function fieldPath(instancePath: string): string {
  return instancePath
    .split("/")
    .filter(Boolean)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), "");
}

/** A readable message naming the field, from the first schema violation. */
/**
 * The values a field may take, when the schema lists them: an `enum`, or a union of constants
 * (each branch's `const` issue at the same path names one allowed value). Empty otherwise.
 */
function allowedValues(issue: AjvIssue, all: readonly AjvIssue[]): unknown[] {
  if (issue.keyword === "enum" && Array.isArray(issue.params?.allowedValues)) return issue.params.allowedValues;
  if (issue.keyword !== "const") return [];
  return all
    .filter((other) => other.keyword === "const" && other.instancePath === issue.instancePath)
    .map((other) => other.params?.allowedValue);
}

export function validationError(context: string, issue: AjvIssue, all: readonly AjvIssue[] = [issue]): GatewayError {
  const base = fieldPath(issue.instancePath ?? "");
  const where = (field: string) => (field ? `${context}.${field}` : context);
  const params = issue.params ?? {};
  if (issue.keyword === "required" && typeof params.missingProperty === "string") {
    const field = base ? `${base}.${params.missingProperty}` : params.missingProperty;
    return new GatewayError("GW_ERR_VALIDATION", `${where(field)} is required`, { param: field });
  }
  if (issue.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    const field = base ? `${base}.${params.additionalProperty}` : params.additionalProperty;
    return new GatewayError("GW_ERR_VALIDATION", `${where(field)} is not a known field`, { param: field });
  }
  const allowed = allowedValues(issue, all);
  if (allowed.length > 1) {
    const listed = allowed.map(String).join(", ");
    return new GatewayError("GW_ERR_VALIDATION", `${where(base)} must be one of ${listed}`, { param: base || null });
  }
  return new GatewayError("GW_ERR_VALIDATION", `${where(base)} ${issue.message ?? "is invalid"}`, {
    param: base || null,
  });
}

const FASTIFY_CODES: Record<string, ErrorName> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "GW_ERR_INVALID_JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "GW_ERR_INVALID_JSON",
  FST_ERR_CTP_BODY_TOO_LARGE: "GW_ERR_BODY_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "GW_ERR_BAD_REQUEST",
};

/** The store was busy (another process's write outlasted the busy timeout): retryable. */
function storeBusy(cause: unknown): GatewayError {
  return new GatewayError("GW_ERR_BUSY", "The gateway's store is busy; retry shortly.", {
    headers: { "retry-after": "1" },
    cause,
  });
}

/** Maps anything thrown in a request to a GatewayError; unknown errors become a 500. */
export function toGatewayError(err: unknown): GatewayError {
  if (isGatewayError(err)) {
    return err.errorName === "GW_ERR_INTERNAL" && isStoreBusy(err.cause) ? storeBusy(err) : err;
  }
  if (isStoreBusy(err)) return storeBusy(err);
  const fe = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation) && fe.validation.length > 0) {
    return validationError(fe.validationContext ?? "body", fe.validation[0] as AjvIssue, fe.validation);
  }
  if (fe && typeof fe.code === "string" && FASTIFY_CODES[fe.code]) {
    const name = FASTIFY_CODES[fe.code] as ErrorName;
    const message = name === "GW_ERR_INVALID_JSON" ? `The body is not valid JSON: ${fe.message}` : ERRORS[name].message;
    return new GatewayError(name, message);
  }
  if (err instanceof SyntaxError && (fe as { statusCode?: number }).statusCode === 400) {
    return new GatewayError("GW_ERR_INVALID_JSON", `The body is not valid JSON: ${err.message}`);
  }
  const status = (fe as { statusCode?: number })?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new GatewayError("GW_ERR_BAD_REQUEST", fe.message, { status });
  }
  return new GatewayError("GW_ERR_INTERNAL", undefined, { cause: err });
}

/** Sends a GatewayError in the surface's shape. */
export function sendError(reply: FastifyReply, surface: Surface, err: GatewayError) {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.status(err.status).type("application/json; charset=utf-8").send(errorBody(surface, err));
}

/**
 * Gives an encapsulated plugin its surface's error handler and not-found handler, so every
 * error inside it (validation, bad JSON, body too large, thrown GatewayErrors, bugs) is answered
 * in that surface's shape. `notFound: false` leaves the not-found answers of the plugin's prefix
 * to the surface that already owns them (several plugins of one shape share `/v1`).
 */
export function installSurface(app: FastifyInstance, surface: Surface, options: { notFound?: boolean } = {}): void {
  app.addHook("onRoute", (route) => withErrorResponses(route, surface));
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    let gwError = toGatewayError(error);
    if (gwError.errorName === "GW_ERR_BODY_TOO_LARGE" && request.routeOptions.bodyLimit) {
      gwError = new GatewayError(
        "GW_ERR_BODY_TOO_LARGE",
        `The body is too large: more than ${request.routeOptions.bodyLimit} bytes, the limit of this API.`,
      );
    }
    if (gwError.status >= 500 && gwError.errorName === "GW_ERR_INTERNAL") {
      request.log.error({ err: error }, "unhandled error");
    }
    if (reply.sent || reply.raw.headersSent) return;
    return sendError(reply, surface, gwError);
  });
  if (options.notFound === false) return;
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    sendError(
      reply,
      surface,
      new GatewayError("GW_ERR_ROUTE_NOT_FOUND", `No route for ${request.method} ${request.url.split("?")[0]}.`),
    ),
  );
}
