import { randomUUID } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import pino from "pino";
import { adminRoutes } from "./api/admin/index.js";
import { anthropicRoutes } from "./api/anthropic/index.js";
import { registerApiDocs } from "./api/docs/index.js";
import { geminiRoutes } from "./api/gemini/index.js";
import { imageRoutes } from "./api/images/index.js";
import { openAiModelRoutes } from "./api/models/index.js";
import { openAiChatRoutes } from "./api/openai-chat/index.js";
import { opsRoutes } from "./api/ops/index.js";
import { installSurface, sendError, surfaceOfUrl } from "./api/surfaces.js";
import { taskRoutes } from "./api/tasks/index.js";
import { resolveAdminKeyHash } from "./auth/admin-key.js";
import { Authenticator } from "./auth/authenticator.js";
import type { Config } from "./config.js";
import { applyConfiguredCatalog } from "./config-file.js";
import type { BackgroundService, GatewayContext } from "./context.js";
import { newRequestId } from "./core/ids.js";
import { GatewayError } from "./errors.js";
import { type ChangeBus, LocalChangeBus } from "./events/change-bus.js";
import { RedisChangeBus } from "./events/redis-change-bus.js";
import { ExpiredKeysSweeper } from "./idempotency/expired-keys-sweeper.js";
import { DEFAULT_IDEMPOTENCY, IdempotencyKeys } from "./idempotency/idempotency-keys.js";
import { RateLimits } from "./limits/rate-limits.js";
import { AccessLogController, loggerOptions } from "./logger.js";
import { countTasksByState, createGatewayMetrics, installRequestMetrics, quotaObserver } from "./metrics/index.js";
import { ChannelHealth } from "./routing/channel-health.js";
import { ChannelProbe } from "./routing/channel-probe.js";
import { ChannelSlots } from "./routing/channel-slots.js";
import { Channels } from "./store/channels.js";
import { openStore } from "./store/database.js";
import { Ledger } from "./store/ledger.js";
import { migrateToLatest } from "./store/migrate.js";
import { PriceBook } from "./store/prices.js";
import { RequestLogWriter, requestLogInsert } from "./store/request-logs.js";
import { Tokens } from "./store/tokens.js";
import { Users } from "./store/users.js";
import { registerWebhookServices } from "./webhooks/index.js";
import { registerTaskServices } from "./workers/index.js";

export interface Gateway {
  app: FastifyInstance;
  ctx: GatewayContext;
  /** The admin key generated on this start (first start without ADMIN_KEY), else null. */
  generatedAdminKey: string | null;
  /** Listens on config host/port (or the given port) and starts background services. */
  listen(port?: number): Promise<string>;
  /** Graceful stop: no new requests, in-flight ones finish, workers stop, the store closes. */
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** A pino destination stream (tests capture logs with it). */
  logStream?: NodeJS.WritableStream;
  bus?: ChangeBus;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole gateway: store (migrated), caches, surfaces and background services. */
export async function buildGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  // On SQLite this process becomes the file's only owner; a second gateway is refused here.
  const store = openStore(config.databaseUrl, { owner: true, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  await migrateToLatest(store);
  const prices = new PriceBook(store.db);
  await prices.seedDefaults();
  const { hash: adminKeyHash, generated } = await resolveAdminKeyHash(store.db, config.adminKey);

  // pino's own destination: lines are buffered while a write is under way and written to stdout
  // asynchronously (flushed at exit), so a busy gateway pays one write for many lines.
  const logger = pino(loggerOptions(config.logLevel), options.logStream ?? pino.destination({ dest: 1, sync: false }));
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new AccessLogController(),
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
      void sendError(reply, surfaceOfUrl(request.url), new GatewayError("GW_ERR_BAD_REQUEST", message));
    },
    forceCloseConnections: "idle",
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Prices, group ratios and channel seeds from the config file, before any cache is filled.
  const catalog = await applyConfiguredCatalog(store, config);
  if (catalog.channelsCreated.length > 0) app.log.info({ channels: catalog.channelsCreated }, "channels seeded");
  prices.invalidate();
  const metrics = createGatewayMetrics({ countTasks: () => countTasksByState(store.db) });

  const users = new Users(store.db);
  const tokens = new Tokens(store.db);
  const channels = new Channels(store.db);
  const auth = new Authenticator(tokens, users);
  const redisBus =
    !options.bus && config.redisUrl ? await RedisChangeBus.connect(config.redisUrl, config.redisKeyPrefix) : null;
  const bus = options.bus ?? redisBus ?? new LocalChangeBus();
  const services: BackgroundService[] = [];
  let listenUrl = `http://${config.host}:${config.port}`;

  const dropCaches = (topic: string) => {
    if (topic === "tokens" || topic === "users") auth.invalidate();
    if (topic === "channels") channels.invalidate();
    if (topic === "prices") prices.invalidate();
  };
  const unsubscribe = bus.subscribe(dropCaches);

  const instanceId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const ctx: GatewayContext = {
    config,
    store,
    logger: app.log,
    ledger: Ledger.forStore(store, quotaObserver(metrics)),
    users,
    tokens,
    channels,
    prices,
    auth,
    bus,
    metrics,
    limits: new RateLimits(
      {
        requestsPerMinute: config.limits.requestsPerMinute,
        authFailuresPerMinute: config.limits.authFailuresPerMinute,
        keyPrefix: config.redisKeyPrefix,
      },
      redisBus?.client ?? null,
    ),
    health: new ChannelHealth(channels, () => announceChannels(), config.routing.disableAfterFailures, app.log),
    slots: new ChannelSlots(),
    idempotency: new IdempotencyKeys(store.db, {
      ...DEFAULT_IDEMPOTENCY,
      leaseMs: config.idempotency.leaseMs,
      waitMs: config.idempotency.waitMs,
      owner: instanceId,
    }),
    requestLogs: new RequestLogWriter(requestLogInsert(store), (err) =>
      app.log.warn({ err }, "request log rows dropped"),
    ),
    adminKeyHash,
    instanceId,
    publicBaseUrl: () => (config.publicBaseUrl ?? listenUrl).replace(/\/+$/, ""),
    announce: async (topic) => {
      dropCaches(topic);
      await bus.publish(topic);
    },
    addService: (service) => {
      services.push(service);
    },
  };

  // The request log is written by every role that serves requests, so it runs for all roles.
  const requestLogs = ctx.requestLogs;
  async function announceChannels() {
    await ctx.announce("channels");
  }
  ctx.addService(new ChannelProbe(channels, announceChannels, config.routing.probeIntervalMs, app.log));

  app.decorateRequest("principal", null);
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    done(null, payload);
  });

  installRequestMetrics(app, metrics);
  // Before any surface: the OpenAPI generator sees only routes added after it.
  await registerApiDocs(app, ctx);
  // Anything outside a surface (unknown paths at the root) answers in the envelope shape.
  installSurface(app, "envelope");
  await app.register(opsRoutes, { ctx });
  await app.register(adminRoutes, { ctx, prefix: "/api/admin" });
  await app.register(taskRoutes, { ctx });
  await app.register(imageRoutes, { ctx, prefix: "/v1" });
  await app.register(openAiChatRoutes, { ctx, prefix: "/v1" });
  await app.register(anthropicRoutes, { ctx, prefix: "/v1/messages" });
  await app.register(openAiModelRoutes, { ctx, prefix: "/v1" });
  await app.register(geminiRoutes, { ctx, prefix: "/v1beta" });
  registerTaskServices(ctx);
  registerWebhookServices(ctx);
  ctx.addService(new ExpiredKeysSweeper(ctx.idempotency, app.log));
  await app.ready();

  let started = false;
  return {
    app,
    ctx,
    generatedAdminKey: generated,
    async listen(port?: number) {
      const address = await app.listen({ host: config.host, port: port ?? config.port });
      listenUrl = address.replace("[::1]", "localhost");
      requestLogs.start();
      ctx.health.start();
      if (config.role !== "api") {
        for (const s of services) s.start();
        started = true;
      }
      return listenUrl;
    },
    async close() {
      await app.close();
      await requestLogs.stop();
      await ctx.health.stop();
      if (started) await Promise.all(services.map((s) => s.stop()));
      unsubscribe();
      await bus.close();
      await store.close();
    },
  };
}
