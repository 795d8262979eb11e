import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import { armIdleTimer } from "./body-idle-timeout.js";
import { armBodyMinRate, type BodyMinRate } from "./body-min-rate.js";

export interface SlowBodyLimits extends BodyMinRate {
  /** Longest pause while a body is being sent (ms). */
  idleMs: number;
}

/**
 * Bounds a request body that is slow to arrive: by its longest pause (`armIdleTimer`) and by its
 * average pace after a grace (`armBodyMinRate`).
 *
 * The limits are armed after the event-loop turn in which the request arrived, and only for a
 * request whose body is still incomplete then. A body that came in the same reads as its headers
 * (nearly every API call) has been parsed by then, and costs a place in a list instead of a
 * socket timer and three listeners (those were 3.5% of the gateway's CPU on a content call).
 */
export function installSlowBodyLimits(app: FastifyInstance, limits: SlowBodyLimits): void {
  let waiting: { raw: IncomingMessage; res: ServerResponse }[] = [];
  const arm = () => {
    const requests = waiting;
    waiting = [];
    for (const { raw, res } of requests) {
      if (raw.complete || raw.socket.destroyed) continue;
      armIdleTimer(raw, res, limits.idleMs);
      armBodyMinRate(raw, limits);
    }
  };
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    if (!raw.complete) {
      const hasBody = raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
      if (hasBody) {
        if (waiting.length === 0) setImmediate(arm);
        waiting.push({ raw, res: reply.raw });
      }
    }
    done();
  });
}
