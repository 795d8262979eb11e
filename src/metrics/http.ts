import type { FastifyInstance } from "fastify";
import type { GatewayMetrics } from "./registry.js";

/**
 * Counts every answered request and its duration by route pattern (`/audioa/fetch/:id`, never the
 * raw URL, so ids do not explode the number of series). Requests that matched no route share the
 * label `(unmatched)`.
 */
export function installRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? "(unmatched)",
      status_code: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
