import { type FastifyReply, type FastifyRequest, LogController } from "fastify";
import type { LoggerOptions } from "pino";

const SECRET_QUERY = /([?&](?:key|api_key|token)=)[^&#]*/gi;

/** A URL as it may be logged: query parameters that carry keys are blanked. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, "$1[redacted]");
}

/** pino options: request id on every line, no credentials in any line. */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["x-api-key"]',
        'req.headers["x-goog-api-key"]',
        'req.headers["x-admin-key"]',
        "headers.authorization",
        'headers["x-api-key"]',
        'headers["x-goog-api-key"]',
        "*.key",
        "*.apiKey",
        "*.adminKey",
      ],
      censor: "[redacted]",
    },
    serializers: {
      req(req: FastifyRequest) {
        return {
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.ip,
        };
      },
    },
  };
}

/**
 * Fastify's request log lines, one per request instead of two: the line written when a request
 * is answered carries method, URL (keys blanked), client address, status and time taken; its
 * arrival is logged at `debug` only, so a busy gateway at the default level writes half the lines.
 */
export class AccessLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, "request errored");
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed");
    }
  }
}
