import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { errorShapeOf } from "../api/route-table.js";
import type { Config } from "../config/load.js";
import { GatewayError } from "../core/errors.js";
import { newRequestId } from "../core/ids.js";
import { sendError } from "../http/surfaces.js";
import { AccessLogController, requestLoggerFactory } from "../logging/logger.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The HTTP server: limits on what clients send, request ids, proxies trusted, framework errors shaped. */
export function createHttpServer(config: Config, logger: FastifyBaseLogger) {
  return Fastify({
    loggerInstance: logger,
    logController: new AccessLogController(logger),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: config.bodyLimitBytes,
    // A hop count trusts that many proxies nearest to the gateway.
    trustProxy:
      typeof config.trustProxy === "number"
        ? (
            (hops: number) => (_addr: string, i: number) =>
              i < hops
          )(config.trustProxy)
        : config.trustProxy,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : newRequestId();
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    return503OnClosing: true,
    // Long model names and task ids fit; longer path parameters are refused as a bad URL.
    routerOptions: { maxParamLength: 500 },
    // Errors raised before routing (a malformed URL, a parameter too long) in the surface's shape.
    frameworkErrors: (error, request, reply) => {
      const message =
        error.code === "FST_ERR_MAX_PARAM_LENGTH" ? "A path parameter is too long." : "The URL is malformed.";
      void sendError(reply, errorShapeOf(request.url), new GatewayError("GW_ERR_BAD_REQUEST", message));
    },
    forceCloseConnections: "idle",
    // Limits on what a client sends; none on the answer, so a slow stream to a reading client runs on.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    connectionTimeout: 0,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      keepAliveTimeout: config.http.keepAliveTimeoutMs,
      connectionsCheckingInterval: config.http.checkIntervalMs,
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/**
 * Tracks every route handler's promise, so that a stop waits for what a handler still does after
 * its client is gone (a cut stream settles what it produced) before the store closes.
 */
export function trackHandlers(app: FastifyInstance): Set<Promise<unknown>> {
  const inFlight = new Set<Promise<unknown>>();
  app.addHook("onRoute", (route) => {
    const handler = route.handler;
    route.handler = function tracked(this: FastifyInstance, request, reply) {
      const result: unknown = handler.call(this, request, reply);
      if (result instanceof Promise) {
        const settled = result.then(
          () => undefined,
          () => undefined,
        );
        inFlight.add(settled);
        void settled.then(() => inFlight.delete(settled));
      }
      return result;
    } as typeof handler;
  });
  return inFlight;
}
