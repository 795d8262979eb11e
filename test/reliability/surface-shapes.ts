/**
 * What an answer of each public surface must look like, as plain checks that return a description
 * of the first problem (or null). Used by the fault, fuzz and security suites and by the
 * many-instances script, so every part of the reliability suite judges answers the same way.
 */

export type SurfaceName = "envelope" | "openai" | "google" | "anthropic" | "console" | "ops";

/** The surface that answers a path (unknown paths at the root answer in the envelope shape). */
export function surfaceOf(path: string): SurfaceName {
  const bare = path.split("?")[0] ?? "";
  if (bare === "/v1beta" || bare.startsWith("/v1beta/")) return "google";
  if (bare === "/v1/messages" || bare.startsWith("/v1/messages/")) return "anthropic";
  if (bare === "/v1" || bare.startsWith("/v1/")) return "openai";
  if (bare === "/console" || bare.startsWith("/console/")) return "console";
  if (/^\/(healthz|readyz|metrics|openapi\.json|docs)(\/|$)/.test(bare)) return "ops";
  return "envelope";
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function sameKeys(value: Record<string, unknown>, keys: string[]): boolean {
  const own = Object.keys(value).sort();
  return own.length === keys.length && [...keys].sort().every((k, i) => own[i] === k);
}

/** An error body of the envelope surfaces: exactly `{code, message, data: null}`, code not `success`. */
export function envelopeErrorProblem(body: unknown): string | null {
  if (!isObject(body) || !sameKeys(body, ["code", "message", "data"])) return "not {code, message, data}";
  if (typeof body.code !== "string" || body.code === "" || body.code === "success") return "code is not an error code";
  if (typeof body.message !== "string" || body.message === "") return "message is empty";
  if (body.data !== null) return "data is not null";
  return null;
}

/** An OpenAI error body: exactly `{error: {message, type, param, code}}`. */
export function openAiErrorProblem(body: unknown): string | null {
  if (!isObject(body) || !sameKeys(body, ["error"]) || !isObject(body.error)) return "not {error: {...}}";
  const e = body.error;
  if (!sameKeys(e, ["message", "type", "param", "code"])) return "error is not {message, type, param, code}";
  if (typeof e.message !== "string" || e.message === "") return "error.message is empty";
  if (typeof e.type !== "string" || e.type === "") return "error.type is empty";
  if (e.param !== null && typeof e.param !== "string") return "error.param is neither a string nor null";
  if (typeof e.code !== "string") return "error.code is not a string";
  return null;
}

/** A Google error body: exactly `{error: {code, message, status}}` with `code` the HTTP status. */
export function googleErrorProblem(body: unknown, httpStatus: number): string | null {
  if (!isObject(body) || !sameKeys(body, ["error"]) || !isObject(body.error)) return "not {error: {...}}";
  const e = body.error;
  if (!sameKeys(e, ["code", "message", "status"])) return "error is not {code, message, status}";
  if (e.code !== httpStatus) return `error.code ${String(e.code)} is not the HTTP status ${httpStatus}`;
  if (typeof e.message !== "string" || e.message === "") return "error.message is empty";
  if (typeof e.status !== "string" || !/^[A-Z_]+$/.test(e.status)) return "error.status is not a status word";
  return null;
}

/** An Anthropic error body: exactly `{type: "error", error: {type, message}}`. */
export function anthropicErrorProblem(body: unknown): string | null {
  if (!isObject(body) || !sameKeys(body, ["type", "error"]) || body.type !== "error" || !isObject(body.error)) {
    return 'not {type: "error", error: {...}}';
  }
  const e = body.error;
  if (!sameKeys(e, ["type", "message"])) return "error is not {type, message}";
  if (typeof e.type !== "string" || !/^[a-z_]+$/.test(e.type)) return "error.type is not an error type";
  if (typeof e.message !== "string" || e.message === "") return "error.message is empty";
  return null;
}

/** A console error body: exactly `{error: {code, message}}`, plus `field` when one is named. */
export function consoleErrorProblem(body: unknown): string | null {
  if (!isObject(body) || !sameKeys(body, ["error"]) || !isObject(body.error)) return "not {error: {...}}";
  const e = body.error;
  const keys = "field" in e ? ["code", "message", "field"] : ["code", "message"];
  if (!sameKeys(e, keys)) return "error is not {code, message, field?}";
  if (typeof e.code !== "string" || !/^[a-z_]+$/.test(e.code)) return "error.code is not an error code";
  if (typeof e.message !== "string" || e.message === "") return "error.message is empty";
  if ("field" in e && (typeof e.field !== "string" || e.field === "")) return "error.field is not a field name";
  return null;
}

/** The error shape of a surface. */
export function errorProblem(surface: SurfaceName, status: number, body: unknown): string | null {
  switch (surface) {
    case "envelope":
      return envelopeErrorProblem(body);
    case "openai":
      return openAiErrorProblem(body);
    case "google":
      return googleErrorProblem(body, status);
    case "anthropic":
      return anthropicErrorProblem(body);
    case "console":
      return consoleErrorProblem(body);
    case "ops":
      // /metrics refuses in the envelope shape; the other ops routes have no error of their own.
      return envelopeErrorProblem(body);
  }
}

/**
 * Checks any answer of the gateway: an error status must carry its surface's error body, a
 * success of an envelope surface must be `{code: "success", message, data}`. `body` is the parsed
 * JSON, or undefined when the answer was not JSON.
 */
export function answerProblem(path: string, status: number, contentType: string, body: unknown): string | null {
  const surface = surfaceOf(path);
  if (status >= 400) {
    if (!contentType.includes("application/json")) return `error answer with content type "${contentType}"`;
    return errorProblem(surface, status, body);
  }
  if (surface === "envelope") {
    if (!isObject(body) || body.code !== "success" || typeof body.message !== "string" || !("data" in body)) {
      return "success answer is not {code: success, message, data}";
    }
  }
  return null;
}

/** Parses a body as JSON when it claims to be JSON; undefined otherwise (or when it is broken). */
export function parseJsonBody(contentType: string, text: string): unknown {
  if (!contentType.includes("json")) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
