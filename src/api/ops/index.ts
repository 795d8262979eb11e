import { timingSafeEqual } from "node:crypto";
import net from "node:net";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { bearerKey } from "../../auth/credentials.js";
import type { Config } from "../../config/load.js";
import { GatewayError } from "../../core/errors.js";
import { sha256Hex } from "../../core/ids.js";
import type { GatewayMetrics } from "../../metrics/registry.js";
import type { Store } from "../../store/database.js";

const ErrorEnvelope = Type.Object(
  {
    code: Type.String({ examples: ["unauthenticated"] }),
    message: Type.String(),
    data: Type.Null(),
  },
  { description: "METRICS_KEY is set and the request does not carry it" },
);

const Health = Type.Object(
  { status: Type.Literal("ok") },
  { examples: [{ status: "ok" }], description: "The process is up" },
);
const Ready = Type.Object(
  { status: Type.Literal("ok"), store: Type.Literal("ok"), dialect: Type.String() },
  { examples: [{ status: "ok", store: "ok", dialect: "sqlite" }], description: "Ready for traffic" },
);
const NotReady = Type.Object(
  {
    status: Type.Literal("unavailable"),
    /** Set when the store was asked and did not answer. */
    store: Type.Optional(Type.Literal("unreachable")),
    /** Set when the instance is stopping (it still serves requests until its listener closes). */
    stopping: Type.Optional(Type.Literal(true)),
  },
  {
    examples: [
      { status: "unavailable", store: "unreachable" },
      { status: "unavailable", stopping: true },
    ],
    description: "The store does not answer, or the instance is stopping",
  },
);

/** Whether the gateway listens on loopback only (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1" || bare === "::ffff:127.0.0.1") return true;
  return net.isIPv4(bare) && bare.startsWith("127.");
}

/** True when `presented` is the metrics key; constant time whatever the lengths. */
function metricsKeyMatches(presented: string | null, expectedHash: string): boolean {
  if (!presented) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(presented), "hex"), Buffer.from(expectedHash, "hex"));
}

/** What the ops routes use. */
export interface OpsDeps {
  config: Pick<Config, "host" | "metricsKey" | "metricsPublic">;
  store: Pick<Store, "ping" | "dialect">;
  metrics: Pick<GatewayMetrics, "registry">;
  logger: FastifyBaseLogger;
  /** Aborted when a stop begins: from then on /readyz fails, so that balancers send traffic elsewhere. */
  shuttingDown: AbortSignal;
}

/**
 * /healthz (the process is up), /readyz (the store answers and the instance is not stopping) and
 * /metrics (Prometheus).
 */
export async function opsRoutes(base: FastifyInstance, opts: { deps: OpsDeps }) {
  const { deps } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    "/healthz",
    {
      logLevel: "warn",
      schema: {
        tags: ["ops"],
        summary: "Liveness: the process is up",
        response: { 200: Health },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      logLevel: "warn",
      schema: {
        tags: ["ops"],
        summary: "Readiness: the store answers and the instance is not stopping",
        description:
          "A load balancer sends traffic only to instances answering 200 here. A stopping instance answers 503 " +
          "for SHUTDOWN_DELAY_MS while it still serves requests, then closes its listener.",
        response: { 200: Ready, 503: NotReady },
      },
    },
    async (_request, reply) => {
      if (deps.shuttingDown.aborted) return reply.status(503).send({ status: "unavailable", stopping: true });
      const store = await deps.store.ping();
      if (!store) return reply.status(503).send({ status: "unavailable", store: "unreachable" });
      return { status: "ok" as const, store: "ok" as const, dialect: deps.store.dialect };
    },
  );

  // The key is hashed once so that each scrape compares fixed-length digests.
  const keyHash = deps.config.metricsKey === null ? null : sha256Hex(deps.config.metricsKey);
  // Beyond loopback, metrics (channel names, models, volumes) are not for anyone who can connect.
  const locked = keyHash === null && !deps.config.metricsPublic && !isLoopbackHost(deps.config.host);
  if (locked) {
    deps.logger.warn(
      { host: deps.config.host },
      "/metrics answers 403: set METRICS_KEY (or METRICS_PUBLIC=true) to serve metrics on a gateway listening beyond loopback",
    );
  }
  app.get(
    "/metrics",
    {
      logLevel: "warn",
      schema: {
        tags: ["ops"],
        summary: "Prometheus metrics",
        description:
          "Prometheus text exposition format. When METRICS_KEY is set, send it as `Authorization: Bearer <METRICS_KEY>`. " +
          "A gateway listening beyond loopback without METRICS_KEY answers 403 (unless METRICS_PUBLIC=true).",
        security: [{}, { metricsKey: [] }],
        response: {
          200: {
            description: "Metrics in Prometheus text format",
            content: { "text/plain": { schema: Type.String({ examples: ["gateway_http_requests_total 1\n"] }) } },
          },
          401: ErrorEnvelope,
          403: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      if (locked) {
        throw new GatewayError(
          "GW_ERR_METRICS_KEY_REQUIRED",
          `Metrics are served only with a key on a gateway that listens on ${deps.config.host}: set METRICS_KEY and send it as Authorization: Bearer <key> (or METRICS_PUBLIC=true to serve them to anyone).`,
        );
      }
      if (keyHash !== null && !metricsKeyMatches(bearerKey(request), keyHash)) {
        throw new GatewayError("GW_ERR_UNAUTHENTICATED", "Missing or invalid metrics key.");
      }
      const text = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(text);
    },
  );
}
