import os from "node:os";
import path from "node:path";
import { ConfigError, type Env } from "./error.js";
import type { Config } from "./schema.js";
import { TRUST_ALL_REFUSED, trustProxySetting } from "./trust-proxy.js";

function intFrom(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw.trim()))
    throw new ConfigError(`invalid setting ${name}: must be a whole number (got "${raw}")`);
  return Number(raw);
}

function boolFrom(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`invalid setting ${name}: must be true or false (got "${raw}")`);
}

function trustProxyFrom(raw: string | undefined): false | number | string {
  const parsed = trustProxySetting(raw);
  if ("refused" in parsed) throw new ConfigError(`TRUST_PROXY=${parsed.refused} ${TRUST_ALL_REFUSED}`);
  return parsed.value;
}

/** The defaults, as a newcomer gets them with no environment at all. */
export function defaultConfig(env: Env = process.env): Config {
  const dataDir = env.DATA_DIR || "./data";
  return {
    port: intFrom(env, "PORT", 3000),
    host: env.HOST || "127.0.0.1",
    dataDir,
    databaseUrl: env.DATABASE_URL || `sqlite:${path.join(dataDir, "gateway.sqlite")}`,
    sqliteBusyTimeoutMs: intFrom(env, "SQLITE_BUSY_TIMEOUT_MS", 5000),
    redisUrl: env.REDIS_URL || null,
    adminKey: env.ADMIN_KEY || null,
    quotaPerUnit: intFrom(env, "QUOTA_PER_UNIT", 500_000),
    publicBaseUrl: env.PUBLIC_BASE_URL || null,
    logLevel: (env.LOG_LEVEL || "info") as Config["logLevel"],
    bodyLimitBytes: intFrom(env, "BODY_LIMIT_BYTES", 1024 * 1024),
    bodies: {
      content: {
        maxBytes: intFrom(env, "BODY_CONTENT_MAX_BYTES", 20 * 1024 * 1024),
        maxDepth: intFrom(env, "BODY_CONTENT_MAX_DEPTH", 64),
      },
      chat: {
        maxBytes: intFrom(env, "BODY_CHAT_MAX_BYTES", 32 * 1024 * 1024),
        maxDepth: intFrom(env, "BODY_CHAT_MAX_DEPTH", 64),
      },
      images: {
        maxBytes: intFrom(env, "BODY_IMAGES_MAX_BYTES", 64 * 1024 * 1024),
        maxDepth: intFrom(env, "BODY_IMAGES_MAX_DEPTH", 16),
      },
      tasks: {
        maxBytes: intFrom(env, "BODY_TASKS_MAX_BYTES", 1024 * 1024),
        maxDepth: intFrom(env, "BODY_TASKS_MAX_DEPTH", 16),
      },
      admin: {
        maxBytes: intFrom(env, "BODY_ADMIN_MAX_BYTES", 1024 * 1024),
        maxDepth: intFrom(env, "BODY_ADMIN_MAX_DEPTH", 16),
      },
    },
    trustProxy: trustProxyFrom(env.TRUST_PROXY),
    cors: {
      origins: (env.CORS_ORIGINS || "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    },
    http: {
      headersTimeoutMs: intFrom(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000),
      // The largest default body (64 MiB) at 100 KB/s takes 11 minutes.
      requestTimeoutMs: intFrom(env, "HTTP_REQUEST_TIMEOUT_MS", 15 * 60_000),
      bodyIdleTimeoutMs: intFrom(env, "HTTP_BODY_IDLE_TIMEOUT_MS", 15_000),
      bodyMinBytesPerSecond: intFrom(env, "HTTP_BODY_MIN_BYTES_PER_SECOND", 500),
      bodyRateGraceMs: intFrom(env, "HTTP_BODY_RATE_GRACE_MS", 20_000),
      earlyAnswerDrainBytes: intFrom(env, "HTTP_EARLY_ANSWER_DRAIN_BYTES", 64 * 1024 * 1024),
      earlyAnswerDrainMs: intFrom(env, "HTTP_EARLY_ANSWER_DRAIN_MS", 30_000),
      keepAliveTimeoutMs: intFrom(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 65_000),
      checkIntervalMs: intFrom(env, "HTTP_CHECK_INTERVAL_MS", 1000),
    },
    role: (env.ROLE || "all") as Config["role"],
    instanceName: env.INSTANCE_NAME || `${os.hostname()}:${path.resolve(dataDir)}`,
    charges: {
      openMs: intFrom(env, "CHARGE_OPEN_MS", 10 * 60_000),
      reapIntervalMs: intFrom(env, "CHARGE_REAP_INTERVAL_MS", 5_000),
      usageRecordMs: intFrom(env, "CHARGE_USAGE_RECORD_MS", 1_000),
    },
    shutdownDelayMs: intFrom(env, "SHUTDOWN_DELAY_MS", 5_000),
    shutdownGraceMs: intFrom(env, "SHUTDOWN_GRACE_MS", 25_000),
    tasks: {
      timeoutSeconds: intFrom(env, "TASK_TIMEOUT_SECONDS", 1800),
      pollIntervalMs: intFrom(env, "TASK_POLL_INTERVAL_MS", 2000),
      maxPollIntervalMs: intFrom(env, "TASK_MAX_POLL_INTERVAL_MS", 30_000),
      leaseMs: intFrom(env, "TASK_LEASE_MS", 30_000),
      workerTickMs: intFrom(env, "TASK_WORKER_TICK_MS", 250),
      unsentGraceMs: intFrom(env, "TASK_UNSENT_GRACE_MS", 60_000),
      maxBatchFetchIds: intFrom(env, "TASK_MAX_BATCH_FETCH_IDS", 100),
      enabledActions: (env.TASK_ENABLED_ACTIONS || "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      resultMaxBytes: intFrom(env, "TASK_RESULT_MAX_BYTES", 200 * 1024 * 1024),
      resultCopyTimeoutMs: intFrom(env, "TASK_RESULT_COPY_TIMEOUT_MS", 60_000),
    },
    images: {
      allowPrivateUrls: boolFrom(env, "IMAGE_ALLOW_PRIVATE_URLS", false),
      maxImageBytes: intFrom(env, "IMAGE_MAX_BYTES", 20 * 1024 * 1024),
      fetchTimeoutMs: intFrom(env, "IMAGE_FETCH_TIMEOUT_MS", 15_000),
      fetchMaxBytesPerRequest: intFrom(env, "IMAGE_FETCH_MAX_BYTES_PER_REQUEST", 64 * 1024 * 1024),
      fetchMaxBytesInFlight: intFrom(env, "IMAGE_FETCH_MAX_BYTES_IN_FLIGHT", 256 * 1024 * 1024),
    },
    idempotency: {
      leaseMs: intFrom(env, "IDEMPOTENCY_LEASE_MS", 30_000),
      waitMs: intFrom(env, "IDEMPOTENCY_WAIT_MS", 30_000),
    },
    videos: {
      retentionSeconds: intFrom(env, "VIDEO_RETENTION_SECONDS", 24 * 3600),
      sweepIntervalMs: intFrom(env, "VIDEO_SWEEP_INTERVAL_MS", 60_000),
      referenceMaxBytes: intFrom(env, "VIDEO_REFERENCE_MAX_BYTES", 20 * 1024 * 1024),
    },
    retention: {
      requestLogDays: intFrom(env, "REQUEST_LOG_RETENTION_DAYS", 90),
      taskEventDays: intFrom(env, "TASK_EVENT_RETENTION_DAYS", 90),
      webhookDeliveryDays: intFrom(env, "WEBHOOK_DELIVERY_RETENTION_DAYS", 30),
      intervalMs: intFrom(env, "RETENTION_INTERVAL_MS", 600_000),
      batchRows: intFrom(env, "RETENTION_BATCH_ROWS", 100),
      batchPauseMs: intFrom(env, "RETENTION_BATCH_PAUSE_MS", 100),
    },
    uploads: {
      allowPrivateUrls: boolFrom(env, "UPLOAD_ALLOW_PRIVATE_URLS", false),
      maxBytes: intFrom(env, "UPLOAD_MAX_BYTES", 50 * 1024 * 1024),
      fetchTimeoutMs: intFrom(env, "UPLOAD_FETCH_TIMEOUT_MS", 60_000),
    },
    blobs: {
      url: env.BLOB_URL || null,
      downloads: (env.BLOB_DOWNLOADS || "proxy") as Config["blobs"]["downloads"],
    },
    s3: {
      endpoint: env.S3_ENDPOINT || null,
      region: env.S3_REGION || "us-east-1",
      accessKeyId: env.S3_ACCESS_KEY_ID || null,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || null,
      // Services other than AWS mostly answer on one host, the bucket in the path.
      forcePathStyle: boolFrom(env, "S3_FORCE_PATH_STYLE", Boolean(env.S3_ENDPOINT)),
      checkTimeoutMs: intFrom(env, "S3_CHECK_TIMEOUT_MS", 10_000),
    },
    content: {
      defaultMaxOutputTokens: intFrom(env, "CONTENT_DEFAULT_MAX_OUTPUT_TOKENS", 65_536),
      defaultMaxInputTokens: intFrom(env, "CONTENT_DEFAULT_MAX_INPUT_TOKENS", 1_048_576),
      defaultMaxThinkingTokens: intFrom(env, "CONTENT_DEFAULT_MAX_THINKING_TOKENS", 32_768),
    },
    routing: {
      maxAttempts: intFrom(env, "ROUTING_MAX_ATTEMPTS", 3),
      disableAfterFailures: intFrom(env, "ROUTING_DISABLE_AFTER_FAILURES", 5),
      disableMinUsers: intFrom(env, "ROUTING_DISABLE_MIN_USERS", 3),
      failureWindowMs: intFrom(env, "ROUTING_FAILURE_WINDOW_MS", 60_000),
      slotWaitMs: intFrom(env, "ROUTING_SLOT_WAIT_MS", 30_000),
      probeIntervalMs: intFrom(env, "ROUTING_PROBE_INTERVAL_MS", 30_000),
    },
    limits: {
      requestsPerMinute: intFrom(env, "LIMIT_REQUESTS_PER_MINUTE", 0),
      tasksInFlightPerUser: intFrom(env, "LIMIT_TASKS_IN_FLIGHT_PER_USER", 0),
      authFailuresPerMinute: intFrom(env, "LIMIT_AUTH_FAILURES_PER_MINUTE", 120),
    },
    redisKeyPrefix: env.REDIS_KEY_PREFIX || "media-gateway",
    webhooks: {
      allowPrivateUrls: boolFrom(env, "WEBHOOK_ALLOW_PRIVATE_URLS", false),
      tickMs: intFrom(env, "WEBHOOK_TICK_MS", 500),
      retryBaseMs: intFrom(env, "WEBHOOK_RETRY_BASE_MS", 5000),
      maxAgeSeconds: intFrom(env, "WEBHOOK_MAX_AGE_SECONDS", 24 * 3600),
      timeoutMs: intFrom(env, "WEBHOOK_TIMEOUT_MS", 10_000),
    },
    console: {
      cookieSecret: env.CONSOLE_COOKIE_SECRET || null,
      passwordCost: intFrom(env, "CONSOLE_PASSWORD_COST", 15),
      sessionIdleSeconds: intFrom(env, "CONSOLE_SESSION_IDLE_SECONDS", 2 * 3600),
      sessionMaxSeconds: intFrom(env, "CONSOLE_SESSION_MAX_SECONDS", 24 * 3600),
      loginFailuresPerAccount: intFrom(env, "CONSOLE_LOGIN_FAILURES_PER_ACCOUNT", 5),
      loginFailuresPerAddress: intFrom(env, "CONSOLE_LOGIN_FAILURES_PER_ADDRESS", 20),
      inviteSeconds: intFrom(env, "CONSOLE_INVITE_SECONDS", 7 * 24 * 3600),
    },
    metricsKey: env.METRICS_KEY || null,
    metricsPublic: boolFrom(env, "METRICS_PUBLIC", false),
    prices: [],
    groupRatios: {},
    channels: [],
  };
}
