import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import pino, { type DestinationStream } from "pino";
import { resolveAdminKeyHash } from "../auth/admin-key.js";
import { Authenticator } from "../auth/authenticator.js";
import { checkBlobStorage } from "../blobs/open-blob-store.js";
import { applyConfiguredCatalog } from "../config/file.js";
import type { Config } from "../config/load.js";
import { type ChangeBus, LocalChangeBus } from "../events/change-bus.js";
import { RedisChangeBus } from "../events/redis-change-bus.js";
import { ExpiredKeysSweeper } from "../idempotency/expired-keys-sweeper.js";
import type { BackgroundService } from "../lifecycle/background-service.js";
import {
  explainListenFailure,
  explainPostgresFailure,
  explainRedisFailure,
  explainSqliteFailure,
  startupStep,
} from "../lifecycle/startup-errors.js";
import { gatheringDestination } from "../logging/destination.js";
import { loggerOptions } from "../logging/logger.js";
import { createGatewayMetrics, installRequestMetrics } from "../metrics/index.js";
import { installEarlyAnswerDrain } from "../net/early-answer-drain.js";
import { installSlowBodyLimits } from "../net/slow-body-limits.js";
import { ChannelProbe } from "../routing/channel-probe.js";
import { Channels } from "../store/channels.js";
import { Charges } from "../store/charges.js";
import { openStore } from "../store/database.js";
import { migrateToLatest } from "../store/migrate.js";
import { PriceBook } from "../store/prices.js";
import { RateLimitRules } from "../store/rate-limits.js";
import { Settings } from "../store/settings.js";
import { countTasksByState } from "../store/task-counts.js";
import { TaskStore } from "../store/tasks.js";
import { Tokens } from "../store/tokens.js";
import { Users } from "../store/users.js";
import { registerWebhookServices } from "../webhooks/index.js";
import type { ChargeReaper } from "../workers/charge-reaper.js";
import { registerRetentionPruner, registerTaskServices } from "../workers/index.js";
import { KeyProber } from "../workers/key-prober.js";
import { createHttpServer, trackHandlers } from "./http.js";
import { buildServices, type GatewayServices } from "./services.js";
import { registerSurfaces } from "./surfaces.js";

export type { GatewayServices };

export interface Gateway {
  app: FastifyInstance;
  /** The gateway's services (tests and the command line reach the store, ledger and caches here). */
  ctx: GatewayServices;
  /** Closes overdue open charges (runs as a background service; tests call it with their own clock). */
  chargeReaper: ChargeReaper;
  /** The admin key generated on this start (first start without ADMIN_KEY), else null. */
  generatedAdminKey: string | null;
  /** Listens on config host/port (or the given port) and starts background services. */
  listen(port?: number): Promise<string>;
  /**
   * The stop a SIGTERM asks for: /readyz answers 503 at once while every request is still served
   * (each answer closing its connection) for `delayMs`, so that a load balancer takes the instance
   * out before its listener closes; then close(`drainMs`). An abort of `skipDelay` ends the delay
   * early. Both default to the configured values.
   */
  shutDown(options?: { delayMs?: number; drainMs?: number; skipDelay?: AbortSignal }): Promise<void>;
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

/** Builds the whole gateway: store (migrated), caches, surfaces and background services. */
export async function buildGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  // Charges this instance opened before now were left open by an earlier run.
  const startedAt = Math.floor(Date.now() / 1000);
  const explainStore = (err: unknown) =>
    config.databaseUrl.startsWith("sqlite:")
      ? explainSqliteFailure(err, config)
      : explainPostgresFailure(err, config.databaseUrl);
  // A bucket that cannot be reached stops the start here, not the first upload later.
  await checkBlobStorage(config);
  // On SQLite this process becomes the file's only owner; a second gateway is refused here.
  const store = await startupStep(
    () => openStore(config.databaseUrl, { owner: true, busyTimeoutMs: config.sqliteBusyTimeoutMs }),
    explainStore,
  );
  await startupStep(() => migrateToLatest(store), explainStore);
  const prices = new PriceBook(store.db);
  await prices.seedDefaults();
  const { hash: adminKeyHash, generated } = await resolveAdminKeyHash(new Settings(store.db), config.adminKey);

  // Lines go to stdout asynchronously, gathered into writes of many lines (see gatheringDestination).
  const destination = options.logStream ? null : gatheringDestination();
  const logger = pino(loggerOptions(config.logLevel), options.logStream ?? (destination?.stream as DestinationStream));
  const app = createHttpServer(config, logger as FastifyBaseLogger);

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
  const rateLimitRules = new RateLimitRules(store.db);
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
    if (topic === "limits") rateLimitRules.invalidate();
  };
  const unsubscribe = bus.subscribe(dropCaches);

  const stopping = new AbortController();
  const shuttingDown = new AbortController();
  const ctx = buildServices({
    config,
    store,
    logger: app.log,
    metrics,
    users,
    tokens,
    channels,
    prices,
    rateLimitRules,
    auth,
    bus,
    redis: redisBus?.client ?? null,
    adminKeyHash,
    dropCaches,
    listenUrl: () => listenUrl,
    stopping: stopping.signal,
    shuttingDown: shuttingDown.signal,
    addService: (service) => {
      services.push(service);
    },
  });

  // The request log is written by every role that serves requests, so it runs for all roles.
  const requestLogs = ctx.requestLogs;
  ctx.addService(
    new ChannelProbe(channels, ctx.vendors, () => ctx.announce("channels"), config.routing.probeIntervalMs, app.log),
  );
  ctx.addService(
    new KeyProber(
      channels.keys,
      channels,
      ctx.vendors,
      () => ctx.announce("channels"),
      config.routing.probeIntervalMs,
      app.log,
    ),
  );

  const inFlight = trackHandlers(app);
  app.decorateRequest("principal", null);
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    // A client kept alive on a stopping instance reconnects, through its balancer, to another one.
    if (shuttingDown.signal.aborted) reply.header("connection", "close");
    done(null, payload);
  });

  installRequestMetrics(app, metrics);
  installSlowBodyLimits(app, {
    idleMs: config.http.bodyIdleTimeoutMs,
    bytesPerSecond: config.http.bodyMinBytesPerSecond,
    graceMs: config.http.bodyRateGraceMs,
  });
  installEarlyAnswerDrain(app, { maxBytes: config.http.earlyAnswerDrainBytes, maxMs: config.http.earlyAnswerDrainMs });
  const taskStore = new TaskStore(store.db, ctx.ledger, store.dialect);
  await registerSurfaces(app, ctx, taskStore);
  const chargeReaper = registerTaskServices(ctx, taskStore);
  registerWebhookServices(ctx);
  ctx.addService(new ExpiredKeysSweeper(ctx.idempotency, app.log));
  registerRetentionPruner(ctx);
  await app.ready();

  let started = false;
  const close = async (drainMs = config.shutdownGraceMs) => {
    shuttingDown.abort();
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
    await ctx.keyPools.stop();
    if (started) await Promise.all(services.map((s) => s.stop()));
    unsubscribe();
    await bus.close();
    await store.close();
    await destination?.stop();
  };

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
      ctx.keyPools.start();
      // Calls an earlier run of this instance left open are closed now, whatever the role.
      await chargeReaper.recoverLeftOpen(startedAt);
      if (config.role !== "api") {
        for (const s of services) s.start();
        started = true;
      }
      return listenUrl;
    },
    async shutDown({ delayMs = config.shutdownDelayMs, drainMs = config.shutdownGraceMs, skipDelay } = {}) {
      shuttingDown.abort();
      if (delayMs > 0 && !skipDelay?.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          skipDelay?.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
      }
      app.log.info({ drainMs }, "closing the listener");
      await close(drainMs);
    },
    close,
  };
}
