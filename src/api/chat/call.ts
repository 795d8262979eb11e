import type { FastifyRequest } from "fastify";
import { newRequestId } from "../../core/ids.js";

/** The ledger reference of a chat call: the request id, unless the client chose that id itself. */
export function chatReference(request: FastifyRequest): string {
  const chosenByClient = request.headers["x-request-id"] === request.id;
  return `chat:${chosenByClient ? newRequestId() : request.id}`;
}
