import type { FastifyRequest } from "fastify";

/** The key in `Authorization: Bearer <key>`, or null. Any other scheme counts as absent. */
export function bearerKey(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

function headerValue(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name];
  if (typeof v === "string" && v.trim() !== "") return v.trim();
  return null;
}

/**
 * The key of the Gemini-native surface: `x-goog-api-key` (what Google's SDK sends), `x-api-key`
 * or the `key` query parameter, in that order.
 */
export function googleKey(req: FastifyRequest): string | null {
  const fromHeader = headerValue(req, "x-goog-api-key") ?? headerValue(req, "x-api-key");
  if (fromHeader) return fromHeader;
  const query = req.query as Record<string, unknown> | undefined;
  const key = query?.key;
  return typeof key === "string" && key !== "" ? key : null;
}

/** The key of the Anthropic surface: `x-api-key` (what Anthropic's SDK sends), else a Bearer token. */
export function anthropicKey(req: FastifyRequest): string | null {
  return headerValue(req, "x-api-key") ?? bearerKey(req);
}
