import type { FastifyReply, FastifyRequest } from "fastify";
import { newRequestId } from "../../core/ids.js";

/** The ledger reference of a chat call: the request id, unless the client chose that id itself. */
export function chatReference(request: FastifyRequest): string {
  const chosenByClient = request.headers["x-request-id"] === request.id;
  return `chat:${chosenByClient ? newRequestId() : request.id}`;
}

/** An AbortSignal that fires when the client goes away before the answer is complete. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
