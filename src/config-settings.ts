/**
 * The environment variable behind each setting the file may also set (a new setting in
 * `config.ts` needs its line here; a test checks that none is missing). The environment wins over
 * the file (flags > environment > file > defaults), so a file can be shared by instances that each
 * get their own PORT or ROLE.
 */
export const ENV_OF_SETTING: Readonly<Record<string, string>> = {
  port: "PORT",
  host: "HOST",
  dataDir: "DATA_DIR",
  quotaPerUnit: "QUOTA_PER_UNIT",
  publicBaseUrl: "PUBLIC_BASE_URL",
  logLevel: "LOG_LEVEL",
  bodyLimitBytes: "BODY_LIMIT_BYTES",
  trustProxy: "TRUST_PROXY",
  role: "ROLE",
  shutdownGraceMs: "SHUTDOWN_GRACE_MS",
  "tasks.timeoutSeconds": "TASK_TIMEOUT_SECONDS",
  "tasks.pollIntervalMs": "TASK_POLL_INTERVAL_MS",
  "tasks.maxPollIntervalMs": "TASK_MAX_POLL_INTERVAL_MS",
  "tasks.leaseMs": "TASK_LEASE_MS",
  "tasks.workerTickMs": "TASK_WORKER_TICK_MS",
  "tasks.unsentGraceMs": "TASK_UNSENT_GRACE_MS",
  "tasks.maxBatchFetchIds": "TASK_MAX_BATCH_FETCH_IDS",
  "tasks.enabledActions": "TASK_ENABLED_ACTIONS",
  "images.allowPrivateUrls": "IMAGE_ALLOW_PRIVATE_URLS",
  "images.maxImageBytes": "IMAGE_MAX_BYTES",
  "images.fetchTimeoutMs": "IMAGE_FETCH_TIMEOUT_MS",
  "content.defaultMaxOutputTokens": "CONTENT_DEFAULT_MAX_OUTPUT_TOKENS",
  "routing.maxAttempts": "ROUTING_MAX_ATTEMPTS",
  "routing.disableAfterFailures": "ROUTING_DISABLE_AFTER_FAILURES",
  "routing.probeIntervalMs": "ROUTING_PROBE_INTERVAL_MS",
  "limits.requestsPerMinute": "LIMIT_REQUESTS_PER_MINUTE",
  "limits.tasksInFlightPerUser": "LIMIT_TASKS_IN_FLIGHT_PER_USER",
  "limits.authFailuresPerMinute": "LIMIT_AUTH_FAILURES_PER_MINUTE",
  redisKeyPrefix: "REDIS_KEY_PREFIX",
  "webhooks.allowPrivateUrls": "WEBHOOK_ALLOW_PRIVATE_URLS",
  "webhooks.tickMs": "WEBHOOK_TICK_MS",
  "webhooks.retryBaseMs": "WEBHOOK_RETRY_BASE_MS",
  "webhooks.maxAgeSeconds": "WEBHOOK_MAX_AGE_SECONDS",
  "webhooks.timeoutMs": "WEBHOOK_TIMEOUT_MS",
};

/** Settings read from the environment only: they hold secrets. */
export const SECRET_SETTINGS: Readonly<Record<string, string>> = {
  databaseUrl: "DATABASE_URL",
  redisUrl: "REDIS_URL",
  adminKey: "ADMIN_KEY",
  metricsKey: "METRICS_KEY",
};
