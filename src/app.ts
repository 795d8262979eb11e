import { randomUUID } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import pino from "pino";
import { adminRoutes } from "./api/admin/index.js";
import { anthropicRoutes } from "./api/anthropic/index.js";
import { requireToken } from "./api/auth-hook.js";
import { registerApiDocs } from "./api/docs/index.js";
import { geminiRoutes } from "./api/gemini/index.js";
import { imageRoutes } from "./api/images/index.js";
import { openAiModelRoutes } from "./api/models/index.js";
import { openAiChatRoutes } from "./api/openai-chat/index.js";
import { opsRoutes } from "./api/ops/index.js";
import { installSurface, sendError, surfaceOfUrl } from "./api/surfaces.js";
import { taskRoutes } from "./api/tasks/index.js";
import { taskSurfacePorts } from "./api/tasks/surface-ports.js";
import { adminKeyHashSource, resolveAdminKeyHash } from "./auth/admin-key.js";
import { Authenticator } from "./auth/authenticator.js";
import type { Config } from "./config.js";
import { applyConfiguredCatalog } from "./config-file.js";
import type { BackgroundService, GatewayContext } from "./context.js";
import { GatewayError } from "./core/errors.js";
import { newRequestId } from "./core/ids.js";
import { type ChangeBus, LocalChangeBus } from "./events/change-bus.js";
import { RedisChangeBus } from "./events/redis-change-bus.js";
import { ExpiredKeysSweeper } from "./idempotency/expired-keys-sweeper.js";
import { DEFAULT_IDEMPOTENCY, IdempotencyKeys } from "./idempotency/idempotency-keys.js";
import { RateLimits } from "./limits/rate-limits.js";
import { AccessLogController, loggerOptions } from "./logger.js";
import { countTasksByState, createGatewayMetrics, installRequestMetrics, quotaObserver } from "./metrics/index.js";
import { installBodyIdleTimeout } from "./net/body-idle-timeout.js";
import { ChannelHealth } from "./routing/channel-health.js";
import { ChannelProbe } from "./routing/channel-probe.js";
import { ChannelSlots } from "./routing/channel-slots.js";
import {
  explainListenFailure,
  explainPostgresFailure,
  explainRedisFailure,
  explainSqliteFailure,
  startupStep,
} from "./startup-errors.js";
import { Channels } from "./store/channels.js";
import { Charges } from "./store/charges.js";
import { openStore } from "./store/database.js";
import { Ledger } from "./store/ledger.js";
import { migrateToLatest } from "./store/migrate.js";
import { PriceBook } from "./store/prices.js";
import { RequestLogWriter, requestLogInsert } from "./store/request-logs.js";
import { TaskStore } from "./store/tasks.js";
import { Tokens } from "./store/tokens.js";
import { Users } from "./store/users.js";
import { registerWebhookServices } from "./webhooks/index.js";
import type { ChargeReaper } from "./workers/charge-reaper.js";
import { registerTaskServices } from "./workers/index.js";

export interface Gateway {
  app: FastifyInstance;
  ctx: GatewayContext;
  /** Closes overdue open charges (runs as a background service; tests call it with their own clock). */
  chargeReaper: ChargeReaper;
  /** The admin key generated on this start (first start without ADMIN_KEY), else null. */
  generatedAdminKey: string | null;
  /** Listens on config host/port (or the given port) and starts background services. */
  listen(port?: number): Promise<string>;
  /**
   * Graceful stop: no new requests; in-flight ones finish within `drainMs` (the configured
   * drain window by default), streams still open then are cut and settled; workers stop, the
   * store closes.
   */
  close(drainMs?: number): Promise<void>;
}

export interface GatewayOptions {
  /** A pino destination stream (tests capture logs with it). */
  logStream?: NodeJS.WritableStream;
  bus?: ChangeBus;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole gateway: store (migrated), caches, surfaces and background services. */
export async function buildGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  // Charges this instance opened before now were left open by an earlier run.
  const startedAt = Math.floor(Date.now() / 1000);
  const explainStore = (err: unknown) =>
    config.databaseUrl.startsWith("sqlite:")
      ? explainSqliteFailure(err, config)
      : explainPostgresFailure(err, config.databaseUrl);
  // On SQLite this process becomes the file's only owner; a second gateway is refused here.
  const store = await startupStep(
    () => openStore(config.databaseUrl, { owner: true, busyTimeoutMs: config.sqliteBusyTimeoutMs }),
    explainStore,
  );
  await startupStep(() => migrateToLatest(store), explainStore);
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

  // Prices, group ratios and channel seeds from the config file, before any cache is filled.
  const catalog = await applyConfiguredCatalog(store, config);
  if (catalog.channelsCreated.length > 0) app.log.info({ channels: catalog.channelsCreated }, "channels seeded");
  prices.invalidate();
  const openCharges = new Charges(store.db, store.dialect);
  const metrics = createGatewayMetrics({
    countTasks: () => countTasksByState(store.db),
    countOpenCharges: () => openCharges.openCounts(Date.now()),
  });

  const users = new Users(store.db);
  const tokens = new Tokens(store.db);
  const channels = new Channels(store.db);
  const auth = new Authenticator(tokens, users);
  const redisBus =
    !options.bus && config.redisUrl
      ? await startupStep(
          () => RedisChangeBus.connect(config.redisUrl as string, config.redisKeyPrefix),
          (err) => explainRedisFailure(err, config.redisUrl as string),
        )
      : null;
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
  const stopping = new AbortController();
  const ctx: GatewayContext = {
    config,
    store,
    logger: app.log,
    ledger: Ledger.forStore(store, quotaObserver(metrics), {
      instance: config.instanceName,
      openMs: config.charges.openMs,
    }),
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
    health: new ChannelHealth(
      channels,
      () => announceChannels(),
      {
        afterFailures: config.routing.disableAfterFailures,
        minUsers: config.routing.disableMinUsers,
        windowMs: config.routing.failureWindowMs,
      },
      app.log,
    ),
    slots: new ChannelSlots(config.routing.slotWaitMs),
    idempotency: new IdempotencyKeys(store.db, {
      ...DEFAULT_IDEMPOTENCY,
      leaseMs: config.idempotency.leaseMs,
      waitMs: config.idempotency.waitMs,
      owner: instanceId,
    }),
    requestLogs: new RequestLogWriter(requestLogInsert(store), (err) =>
      app.log.warn({ err }, "a request log row was dropped"),
    ),
    adminKeyHash: adminKeyHashSource(store.db, config.adminKey, adminKeyHash),
    instanceId,
    publicBaseUrl: () => (config.publicBaseUrl ?? listenUrl).replace(/\/+$/, ""),
    announce: async (topic) => {
      dropCaches(topic);
      await bus.publish(topic);
    },
    stopping: stopping.signal,
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

  // Every route handler's promise, so that a stop waits for what a handler still does after its
  // client is gone (a cut stream settles what it produced) before the store closes.
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

  app.decorateRequest("principal", null);
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    done(null, payload);
  });

  installRequestMetrics(app, metrics);
  installBodyIdleTimeout(app, config.http.bodyIdleTimeoutMs);
  // Before any surface: the OpenAPI generator sees only routes added after it.
  await registerApiDocs(app, ctx);
  // Anything outside a surface (unknown paths at the root) answers in the envelope shape.
  installSurface(app, "envelope");
  await app.register(opsRoutes, { ctx });
  await app.register(adminRoutes, { ctx, prefix: "/api/admin" });
  const taskStore = new TaskStore(store.db, ctx.ledger, store.dialect);
  await app.register(taskRoutes, { deps: taskSurfacePorts(ctx, taskStore, requireToken(ctx, "bearer")) });
  await app.register(imageRoutes, { ctx, prefix: "/v1" });
  await app.register(openAiChatRoutes, { ctx, prefix: "/v1" });
  await app.register(anthropicRoutes, { ctx, prefix: "/v1/messages" });
  await app.register(openAiModelRoutes, { ctx, prefix: "/v1" });
  await app.register(geminiRoutes, { ctx, prefix: "/v1beta" });
  const chargeReaper = registerTaskServices(ctx, taskStore);
  registerWebhookServices(ctx);
  ctx.addService(new ExpiredKeysSweeper(ctx.idempotency, app.log));
  await app.ready();

  let started = false;
  return {
    app,
    ctx,
    chargeReaper,
    generatedAdminKey: generated,
    async listen(port?: number) {
      const address = await startupStep(
        () => app.listen({ host: config.host, port: port ?? config.port }),
        (err) => explainListenFailure(err, config.host, port ?? config.port),
      );
      listenUrl = address.replace("[::1]", "localhost");
      requestLogs.start();
      ctx.health.start();
      // Calls an earlier run of this instance left open are closed now, whatever the role.
      await chargeReaper.recoverLeftOpen(startedAt);
      if (config.role !== "api") {
        for (const s of services) s.start();
        started = true;
      }
      return listenUrl;
    },
    async close(drainMs = config.shutdownGraceMs) {
      const closing = app.close();
      let timer: NodeJS.Timeout | undefined;
      const windowEnded = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), drainMs);
      });
      if (await Promise.race([closing.then(() => false), windowEnded])) {
        // The drain window is over: streams still open end with an error event and settle what
        // they produced; then every connection still open is closed.
        app.log.warn({ drainMs }, "drain window over, ending the streams and connections still open");
        stopping.abort();
        let settleTimer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(inFlight),
          new Promise((resolve) => {
            settleTimer = setTimeout(resolve, 5000);
          }),
        ]);
        clearTimeout(settleTimer);
        app.server.closeAllConnections();
      }
      clearTimeout(timer);
      await closing;
      await Promise.all(inFlight);
      await requestLogs.stop();
      await ctx.health.stop();
      if (started) await Promise.all(services.map((s) => s.stop()));
      unsubscribe();
      await bus.close();
      await store.close();
    },
  };
}
