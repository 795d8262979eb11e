import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import pino, { type Logger, type LoggerOptions } from "pino";
import { redactHeaders, redactUrl, SECRET_HEADERS } from "./redaction.js";

/** pino options: request id on every line, no credentials in any line. */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        ...SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`, `*.headers["${h}"]`]),
        "key",
        "*.key",
        "*.apiKey",
        "*.adminKey",
        "*.metricsKey",
      ],
      censor: "[redacted]",
    },
    serializers: {
      headers: (headers: Record<string, unknown>) =>
        headers && typeof headers === "object" ? redactHeaders(headers) : headers,
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
 *
 * The line of an answered request is made of known fields only (the URL already blanked by
 * redactUrl), so no redaction path can match it: it is written through a child of the root logger
 * without redaction, which otherwise walks every field of every line.
 */
export class AccessLogController extends LogController {
  private readonly completed: FastifyBaseLogger | null;

  /** The access line as text, where the root logger is a plain pino logger (see accessLine). */
  private readonly line: ((request: FastifyRequest, reply: FastifyReply) => string) | null;

  constructor(root?: FastifyBaseLogger) {
    super();
    this.completed = root
      ? (root.child({}, {
          redact: { paths: [] },
          serializers: { req: (fields: unknown) => fields, res: (fields: unknown) => fields },
        } as Parameters<FastifyBaseLogger["child"]>[1]) as FastifyBaseLogger)
      : null;
    this.line = this.completed ? accessLine(this.completed) : null;
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, "request errored");
    } else if (this.completed && (reply.log as unknown as Logger).isLevelEnabled("info")) {
      const line = this.line ? this.line(request, reply) : null;
      if (line !== null) {
        (this.completed as unknown as Record<symbol, { write(text: string): unknown }>)[pino.symbols.streamSym]?.write(
          line,
        );
        return;
      }
      // The same line as through reply.log (its only binding is the request id), field for field.
      this.completed.info(
        {
          reqId: request.id,
          req: { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip },
          res: { statusCode: reply.statusCode },
          responseTime: reply.elapsedTime,
        },
        "request completed",
      );
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed");
    }
  }
}

/**
 * Writes the access line of an answered request as pino writes it through `logger` (level, time,
 * the logger's bindings, then the fields, then the message), made directly from its known fields:
 * pino's general path walks the fields, runs each through its serializers and serialises the two
 * nested objects with its cycle-safe stringifier, which cost more than the line itself. Null when
 * the logger is not a plain pino logger writing JSON lines (a log hook, a mixin, formatters, a
 * nested key, a destination that wants each line's metadata): the general path is taken then.
 */
function accessLine(logger: FastifyBaseLogger): ((request: FastifyRequest, reply: FastifyReply) => string) | null {
  const s = pino.symbols;
  const own = logger as unknown as Record<symbol, unknown>;
  const formatters = own[s.formattersSym] as { log?: unknown; level?: unknown } | undefined;
  const stream = own[s.streamSym] as Record<symbol, unknown> | undefined;
  const hooks = own[s.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const levelPrefix = (own[s.lsCacheSym] as Record<number, string> | undefined)?.[30];
  const time = own[s.timeSym] as (() => string) | undefined;
  if (
    own[s.mixinSym] ||
    own[s.nestedKeySym] ||
    own[s.messageKeySym] !== "msg" ||
    own[s.endSym] !== "}\n" ||
    hooks?.logMethod ||
    hooks?.streamWrite ||
    formatters?.log ||
    !stream ||
    stream[s.needsMetadataGsym] === true ||
    typeof levelPrefix !== "string" ||
    typeof time !== "function"
  ) {
    return null;
  }
  return (request, reply) => {
    const bindings = own[s.chindingsSym] as string;
    const ip = request.ip as string | undefined;
    const address = ip === undefined ? "" : `,"remoteAddress":${JSON.stringify(ip)}`;
    return `${levelPrefix}${time()}${bindings},"reqId":${JSON.stringify(request.id)},"req":{"method":${JSON.stringify(
      request.method,
    )},"url":${JSON.stringify(redactUrl(request.url))}${address}},"res":{"statusCode":${reply.statusCode}},"responseTime":${finite(
      reply.elapsedTime,
    )},"msg":"request completed"}\n`;
  };
}

/** A number as pino writes it: null when it is not finite. */
function finite(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];

/**
 * A request's logger that becomes a child of the root logger (bound to the request id) only when
 * something is logged through it at an enabled level. Fastify made that child for every request,
 * while a request answered normally logs nothing through it: its access line is written by
 * AccessLogController, and its arrival only at `debug`. Making the child (its bindings serialised,
 * its methods set up) was about 2% of the gateway's CPU on a content call.
 */
class RequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly root: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.root.child(this.bindings);
    return this.made;
  }

  get level(): string {
    return (this.made ?? this.root).level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return ((this.made ?? this.root) as unknown as Logger).isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>, options?: Parameters<FastifyBaseLogger["child"]>[1]): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  fatal(...args: LogArgs): void {
    if (this.isLevelEnabled("fatal")) this.logger.fatal(...args);
  }
  error(...args: LogArgs): void {
    if (this.isLevelEnabled("error")) this.logger.error(...args);
  }
  warn(...args: LogArgs): void {
    if (this.isLevelEnabled("warn")) this.logger.warn(...args);
  }
  info(...args: LogArgs): void {
    if (this.isLevelEnabled("info")) this.logger.info(...args);
  }
  debug(...args: LogArgs): void {
    if (this.isLevelEnabled("debug")) this.logger.debug(...args);
  }
  trace(...args: LogArgs): void {
    if (this.isLevelEnabled("trace")) this.logger.trace(...args);
  }
  silent(): void {}
}

/**
 * Fastify's factory of request loggers: a RequestLogger, or the child itself when the route asks
 * for a level or serializers of its own (the child's level then differs from the root's).
 */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: Parameters<FastifyBaseLogger["child"]>[1],
): FastifyBaseLogger {
  if (options?.level !== undefined || options?.serializers !== undefined) return logger.child(bindings, options);
  return new RequestLogger(logger, bindings) as unknown as FastifyBaseLogger;
}
