import type { FastifyRequest } from "fastify";
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
