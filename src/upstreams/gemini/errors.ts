import { classifyStatus, UpstreamError } from "../../core/upstream-error.js";
import { withoutSecret } from "../secret-scrub.js";

interface GoogleErrorBody {
  error?: {
    code?: unknown;
    message?: unknown;
    status?: unknown;
    details?: unknown;
  };
}

/** A key the upstream rejected: Google answers 400 INVALID_ARGUMENT with reason API_KEY_INVALID. */
function isBadKey(body: GoogleErrorBody): boolean {
  const details = body.error?.details;
  if (Array.isArray(details) && details.some((d) => (d as { reason?: unknown })?.reason === "API_KEY_INVALID")) {
    return true;
  }
  const message = body.error?.message;
  return typeof message === "string" && /api key not valid|api_key_invalid/i.test(message);
}

/** Removes the channel key from text that came from the upstream, should it ever be echoed. */
export function withoutKey(text: string, key: string): string {
  return withoutSecret(text, key);
}

/**
 * Classifies a Gemini error answer (`{"error": {"code", "message", "status"}}`) given with an HTTP
 * status. A bad key is an `auth` error (the channel is broken), not a refusal of the request.
 */
export function geminiError(status: number, bodyText: string, key: string): UpstreamError {
  let body: GoogleErrorBody = {};
  try {
    const parsed = JSON.parse(bodyText);
    if (Array.isArray(parsed)) body = (parsed[0] ?? {}) as GoogleErrorBody;
    else if (parsed && typeof parsed === "object") body = parsed as GoogleErrorBody;
  } catch {
    // Not JSON (a proxy's HTML page): the status alone decides.
  }
  const word = typeof body.error?.status === "string" ? `${body.error.status}: ` : "";
  const raw = typeof body.error?.message === "string" ? body.error.message : bodyText.slice(0, 200) || "no message";
  // Blanked before it is cut short, so that no partial copy of the key survives at the cut.
  const message = withoutKey(`${status} ${word}${raw.slice(0, 4000)}`, key).slice(0, 500);
  const kind = status === 400 && isBadKey(body) ? "auth" : classifyStatus(status);
  return new UpstreamError(kind, message, { status });
}

/** An error object sent inside a 200 stream (`data: {"error": {...}}`), as an UpstreamError. */
export function geminiStreamError(error: unknown, key: string): UpstreamError {
  const code = (error as { code?: unknown })?.code;
  const status = typeof code === "number" && code >= 400 && code < 600 ? code : 500;
  return geminiError(status, JSON.stringify({ error }), key);
}
