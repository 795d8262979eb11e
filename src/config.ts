import os from "node:os";
import path from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value, type ValueError } from "@sinclair/typebox/value";
import { ENV_OF_SETTING, SECRET_SETTINGS } from "./config-settings.js";
import { badProxyEntry, TRUST_ALL_REFUSED, trustProxySetting } from "./config-trust-proxy.js";
import { CHANNEL_TYPES } from "./core/channel.js";
import { ChannelSettingsSchema } from "./core/channel-settings.js";

/** Size and nesting bounds of one surface's JSON bodies. */
const BodyBounds = Type.Object({
  /** Largest body accepted, in bytes. */
  maxBytes: Type.Integer({ minimum: 1024 }),
  /** Deepest nesting of arrays and objects accepted. */
  maxDepth: Type.Integer({ minimum: 2, maximum: 1000 }),
});

const Amount = Type.Number({ minimum: 0, maximum: 1_000_000 });

/** A price the config file sets; the same fields as the admin API's PUT /prices. */
const PriceSeed = Type.Object(
  {
    kind: Type.Union([Type.Literal("task"), Type.Literal("image"), Type.Literal("content")]),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: Type.Optional(Amount),
    input_per_million: Type.Optional(Amount),
    output_per_million: Type.Optional(Amount),
    cached_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

/** A channel the config file seeds (created at start when no channel has its name). */
const ChannelSeed = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Union(CHANNEL_TYPES.map((t) => Type.Literal(t))),
    base_url: Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2000 }),
    /** Name of the environment variable holding the channel's key: keys never sit in the file. */
    key_env: Type.Optional(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" })),
    /** The key itself, filled from `key_env` at start. */
    key: Type.Optional(Type.String({ minLength: 1 })),
    models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1 }),
    model_mapping: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }))),
    groups: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1 })),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    price_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
    status: Type.Optional(Type.Union([Type.Literal("enabled"), Type.Literal("disabled")])),
    settings: Type.Optional(ChannelSettingsSchema),
  },
  { additionalProperties: false },
);
export type ChannelSeed = Static<typeof ChannelSeed>;
export type PriceSeed = Static<typeof PriceSeed>;

/** Everything the gateway can be told at start-up. Validated once; a bad setting stops the process. */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  dataDir: Type.String({ minLength: 1 }),
  /** `sqlite:<file>` or `postgres://...`. Derived from DATA_DIR when unset. */
  databaseUrl: Type.String({ minLength: 1 }),
  /**
   * SQLite: how long a write waits for another process's write (an admin command) before it
   * gives up; a request that still finds the file busy is answered 503 with Retry-After (ms).
   */
  sqliteBusyTimeoutMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
  /** Optional: `redis://...` for limits and cache invalidation shared between instances. */
  redisUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  /** Plain admin key from the environment; when null the stored hash (or a generated one) is used. */
  adminKey: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
  quotaPerUnit: Type.Integer({ minimum: 1 }),
  /** Absolute base URL used in links the gateway hands out (image URLs, callback URLs). */
  publicBaseUrl: Type.Union([Type.String({ pattern: "^https?://" }), Type.Null()]),
  logLevel: Type.Union([
    Type.Literal("fatal"),
    Type.Literal("error"),
    Type.Literal("warn"),
    Type.Literal("info"),
    Type.Literal("debug"),
    Type.Literal("trace"),
    Type.Literal("silent"),
  ]),
  /** Largest body of any route outside the surfaces below (bytes). */
  bodyLimitBytes: Type.Integer({ minimum: 1024 }),
  /** Per surface: the largest body and the deepest JSON nesting accepted, checked before any work. */
  bodies: Type.Object({
    content: BodyBounds,
    chat: BodyBounds,
    images: BodyBounds,
    tasks: BodyBounds,
    admin: BodyBounds,
  }),
  /**
   * Whether to take the client address from X-Forwarded-For: false (direct clients), a number of
   * proxy hops, or a comma-separated list of proxy addresses/CIDRs. Behind a load balancer, set it,
   * or every client has the balancer's address (per-address limits and token IP allowlists would
   * then apply to all clients at once). `true` (trust whatever a client writes) is refused.
   */
  trustProxy: Type.Union([Type.Literal(false), Type.Integer({ minimum: 1 }), Type.String({ minLength: 1 })]),
  /** Time limits on what clients send (the answer is never limited by these). */
  http: Type.Object({
    /** Time allowed to send the request's headers (ms). */
    headersTimeoutMs: Type.Integer({ minimum: 10 }),
    /** Time allowed to send the whole request, headers and body (ms). */
    requestTimeoutMs: Type.Integer({ minimum: 10 }),
    /** Longest pause while a body is being sent (ms). */
    bodyIdleTimeoutMs: Type.Integer({ minimum: 10 }),
    /** How long an idle kept-alive connection stays open between requests (ms). */
    keepAliveTimeoutMs: Type.Integer({ minimum: 10 }),
    /** How often the server checks connections against the header and request limits (ms). */
    checkIntervalMs: Type.Integer({ minimum: 5 }),
  }),
  role: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")]),
  /**
   * Name of this instance, written on every charge it opens: at start an instance closes the
   * charges its previous run left open. Unique per instance, stable across its restarts.
   */
  instanceName: Type.String({ minLength: 1, maxLength: 200 }),
  charges: Type.Object({
    /** How long a content or image charge stays open without news before the reaper closes it (ms). */
    openMs: Type.Integer({ minimum: 1000 }),
    /** How often the charge reaper looks for overdue open charges (ms). */
    reapIntervalMs: Type.Integer({ minimum: 10 }),
    /** Least time between two records of a stream's usage on its open charge (ms). */
    usageRecordMs: Type.Integer({ minimum: 10 }),
  }),
  /**
   * The drain window after SIGTERM (ms): in-flight requests may finish within it; streams still
   * open at its end end with an error event and are billed for what they produced.
   */
  shutdownGraceMs: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
  tasks: Type.Object({
    /** A task still unfinished this long after submit ends as FAILURE and is refunded. */
    timeoutSeconds: Type.Integer({ minimum: 1 }),
    /** Delay before the first poll and between polls of a task while it runs (ms). */
    pollIntervalMs: Type.Integer({ minimum: 10 }),
    /** Longest wait between two polls of one task after backoff (ms). */
    maxPollIntervalMs: Type.Integer({ minimum: 10 }),
    /** How long a worker owns a claimed task before another may take it (ms). */
    leaseMs: Type.Integer({ minimum: 100 }),
    /** How often each worker looks for due tasks (ms). */
    workerTickMs: Type.Integer({ minimum: 5 }),
    /** Tasks charged but never sent upstream are failed and refunded after this long (ms). */
    unsentGraceMs: Type.Integer({ minimum: 100 }),
    /** Most ids accepted by one batch fetch. */
    maxBatchFetchIds: Type.Integer({ minimum: 1, maximum: 1000 }),
    /** Actions reopened by the operator (REPLACE, INSTRUMENTALS_SWAP are closed by default). */
    enabledActions: Type.Array(Type.String()),
  }),
  images: Type.Object({
    /** Allow image URLs on loopback / private ranges (tests, trusted networks). */
    allowPrivateUrls: Type.Boolean(),
    maxImageBytes: Type.Integer({ minimum: 1024 }),
    fetchTimeoutMs: Type.Integer({ minimum: 100 }),
    /** Most bytes of input images one request may download; over it, a 400 naming the field. */
    fetchMaxBytesPerRequest: Type.Integer({ minimum: 1024 }),
    /** Most bytes of input images all requests of this instance may hold at once; over it, a 503. */
    fetchMaxBytesInFlight: Type.Integer({ minimum: 1024 }),
  }),
  idempotency: Type.Object({
    /**
     * Lease of a running request on its Idempotency-Key, renewed while it runs; a key whose lease
     * ran out (its instance died) is taken over by a retry (ms).
     */
    leaseMs: Type.Integer({ minimum: 100 }),
    /** How long a repeat waits for the running first request before a 409 (ms). */
    waitMs: Type.Integer({ minimum: 0 }),
  }),
  content: Type.Object({
    /**
     * Limits assumed for a content model whose published limits the gateway does not know: the
     * most output tokens per candidate, the context window, the most thinking tokens. They bound
     * the hold taken before a call (see docs/content.md).
     */
    defaultMaxOutputTokens: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
    defaultMaxInputTokens: Type.Integer({ minimum: 1, maximum: 100_000_000 }),
    defaultMaxThinkingTokens: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
  }),
  routing: Type.Object({
    /** Most channels tried for one request or task submit (failover). */
    maxAttempts: Type.Integer({ minimum: 1, maximum: 20 }),
    /** Failures within the window after which a channel is disabled automatically. */
    disableAfterFailures: Type.Integer({ minimum: 1 }),
    /** Distinct users whose requests must have failed within the window before it is disabled. */
    disableMinUsers: Type.Integer({ minimum: 1 }),
    /** The window in which failures are counted (ms). */
    failureWindowMs: Type.Integer({ minimum: 100 }),
    /** How long a call waits for a slot of a channel at its `concurrency` before moving on (ms). */
    slotWaitMs: Type.Integer({ minimum: 1 }),
    /** How often automatically disabled channels are probed for recovery (ms). */
    probeIntervalMs: Type.Integer({ minimum: 100 }),
  }),
  limits: Type.Object({
    /** Requests per minute per token; 0 = no limit. */
    requestsPerMinute: Type.Integer({ minimum: 0 }),
    /** Unfinished tasks one user may have at once; 0 = no limit. */
    tasksInFlightPerUser: Type.Integer({ minimum: 0 }),
    /** Failed authentications per minute per client address before it is refused for a while. */
    authFailuresPerMinute: Type.Integer({ minimum: 1 }),
  }),
  /** Prefix of every Redis key and channel of this deployment. */
  redisKeyPrefix: Type.String({ minLength: 1, maxLength: 100 }),
  webhooks: Type.Object({
    /** Allow webhook URLs on loopback / private ranges (tests, trusted networks). */
    allowPrivateUrls: Type.Boolean(),
    tickMs: Type.Integer({ minimum: 10 }),
    retryBaseMs: Type.Integer({ minimum: 10 }),
    maxAgeSeconds: Type.Integer({ minimum: 1 }),
    timeoutMs: Type.Integer({ minimum: 100 }),
  }),
  /** Optional: when set, /metrics requires `Authorization: Bearer <key>`. */
  metricsKey: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
  /**
   * Serve /metrics without a key even when listening beyond loopback. Off by default: there,
   * without METRICS_KEY, /metrics answers 403.
   */
  metricsPublic: Type.Boolean(),
  /** Prices written to the store at every start (the config file is their source of truth). */
  prices: Type.Array(PriceSeed),
  /** Group ratios written to the store at every start. */
  groupRatios: Type.Record(Type.String({ minLength: 1 }), Type.Number({ minimum: 0, maximum: 1000 })),
  /** Channels created at start when no channel of the same name exists. */
  channels: Type.Array(ChannelSeed),
});

export type Config = Static<typeof ConfigSchema>;

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

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
    http: {
      headersTimeoutMs: intFrom(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000),
      requestTimeoutMs: intFrom(env, "HTTP_REQUEST_TIMEOUT_MS", 120_000),
      bodyIdleTimeoutMs: intFrom(env, "HTTP_BODY_IDLE_TIMEOUT_MS", 15_000),
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
    metricsKey: env.METRICS_KEY || null,
    metricsPublic: boolFrom(env, "METRICS_PUBLIC", false),
    prices: [],
    groupRatios: {},
    channels: [],
  };
}

type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K];
};
export type ConfigOverrides = DeepPartial<Config>;

function merge<T>(base: T, over: DeepPartial<T> | undefined): T {
  if (!over) return base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v !== null && typeof v === "object" && !Array.isArray(v) && b !== null && typeof b === "object"
        ? merge(b, v as DeepPartial<typeof b>)
        : v;
  }
  return out as T;
}

/** `/tasks/timeoutSeconds` -> `tasks.timeoutSeconds`, `/channels/0/name` -> `channels[0].name`. */
export function settingName(pointer: string): string {
  return pointer
    .split("/")
    .filter(Boolean)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), "");
}

function channelKey(env: Env, channel: ChannelSeed, index: number): string {
  const name = channel.key_env;
  if (name === undefined) {
    throw new ConfigError(`invalid setting "channels[${index}].key_env": required (the variable holding the key)`);
  }
  const key = env[name];
  if (!key)
    throw new ConfigError(`invalid setting "channels[${index}].key_env": environment variable ${name} is not set`);
  return key;
}

function uniqueNames(names: string[], list: string, field: string): void {
  const seen = new Set<string>();
  for (const [i, name] of names.entries()) {
    if (seen.has(name)) throw new ConfigError(`invalid setting "${list}[${i}].${field}": duplicate "${name}"`);
    seen.add(name);
  }
}

/** What a setting must be, in words an operator can act on. */
function expected(setting: string, error: ValueError): string {
  if (setting === "adminKey" || setting === "metricsKey") {
    const unset = setting === "adminKey" ? ", or leave ADMIN_KEY unset to have one generated on the first start" : "";
    return `must be at least 16 characters: set a longer key (for example openssl rand -hex 24)${unset}`;
  }
  const schema = error.schema as { anyOf?: { const?: unknown }[]; type?: string; minimum?: number; maximum?: number };
  const literals = schema.anyOf?.map((s) => s.const).filter((v) => v !== undefined);
  if (literals && literals.length > 0 && literals.length === schema.anyOf?.length) {
    return `must be one of ${literals.join(", ")}`;
  }
  if (schema.type === "integer" && schema.minimum !== undefined && schema.maximum !== undefined) {
    return `must be a whole number from ${schema.minimum} to ${schema.maximum}`;
  }
  return error.message;
}

/** Builds and validates the configuration; throws a ConfigError naming the bad setting. */
export function loadConfig(env: Env = process.env, overrides?: ConfigOverrides): Config {
  const config = merge(defaultConfig(env), overrides);
  if ((config.trustProxy as unknown) === true) {
    throw new ConfigError(`invalid setting "trustProxy": true ${TRUST_ALL_REFUSED}`);
  }
  const first = [...Value.Errors(ConfigSchema, config)][0];
  if (first) {
    const setting = settingName(first.path);
    // A secret's value never goes into a message, even a wrong one.
    const got = /^(adminKey|metricsKey|databaseUrl|redisUrl)$|\.key$/.test(setting)
      ? ""
      : ` (got ${JSON.stringify(first.value)})`;
    const variable = ENV_OF_SETTING[setting] ?? SECRET_SETTINGS[setting];
    const named = variable ? `"${setting}" (${variable})` : `"${setting}"`;
    throw new ConfigError(`invalid setting ${named}: ${expected(setting, first)}${got}`);
  }
  config.channels = config.channels.map((c, i) => ({ ...c, key: c.key ?? channelKey(env, c, i) }));
  uniqueNames(
    config.channels.map((c) => c.name),
    "channels",
    "name",
  );
  uniqueNames(
    config.prices.map((p) => `${p.kind}:${p.name}`),
    "prices",
    "name",
  );
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError(
      `invalid setting "http.headersTimeoutMs": ${config.http.headersTimeoutMs} is longer than http.requestTimeoutMs (${config.http.requestTimeoutMs}), which includes the headers`,
    );
  }
  if (typeof config.trustProxy === "string") {
    const bad = badProxyEntry(config.trustProxy);
    if (bad !== null) {
      throw new ConfigError(
        `invalid setting "trustProxy": "${bad}" is not a proxy address, a CIDR range or a hop count; ` +
          "write the number of proxies in front of the gateway (1 behind one load balancer) or their addresses " +
          "(10.0.0.0/8,192.168.1.5)",
      );
    }
  }
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(config.databaseUrl)) {
    throw new ConfigError('invalid setting "databaseUrl": must start with sqlite: or postgres://');
  }
  return config;
}
