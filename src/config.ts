import path from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** Everything the gateway can be told at start-up. Validated once; a bad setting stops the process. */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  dataDir: Type.String({ minLength: 1 }),
  /** `sqlite:<file>` or `postgres://...`. Derived from DATA_DIR when unset. */
  databaseUrl: Type.String({ minLength: 1 }),
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
  bodyLimitBytes: Type.Integer({ minimum: 1024 }),
  role: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")]),
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
  }),
  content: Type.Object({
    /** Output tokens assumed for the up-front charge when the request gives no maxOutputTokens. */
    defaultMaxOutputTokens: Type.Integer({ minimum: 1 }),
  }),
});

export type Config = Static<typeof ConfigSchema>;

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function intFrom(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

function boolFrom(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** The defaults, as a newcomer gets them with no environment at all. */
export function defaultConfig(env: Env = process.env): Config {
  const dataDir = env.DATA_DIR || "./data";
  return {
    port: intFrom(env, "PORT", 3000),
    host: env.HOST || "127.0.0.1",
    dataDir,
    databaseUrl: env.DATABASE_URL || `sqlite:${path.join(dataDir, "gateway.sqlite")}`,
    redisUrl: env.REDIS_URL || null,
    adminKey: env.ADMIN_KEY || null,
    quotaPerUnit: intFrom(env, "QUOTA_PER_UNIT", 500_000),
    publicBaseUrl: env.PUBLIC_BASE_URL || null,
    logLevel: (env.LOG_LEVEL || "info") as Config["logLevel"],
    bodyLimitBytes: intFrom(env, "BODY_LIMIT_BYTES", 64 * 1024 * 1024),
    role: (env.ROLE || "all") as Config["role"],
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
    },
    content: {
      defaultMaxOutputTokens: intFrom(env, "CONTENT_DEFAULT_MAX_OUTPUT_TOKENS", 8192),
    },
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

/** Builds and validates the configuration; throws a ConfigError naming the bad setting. */
export function loadConfig(env: Env = process.env, overrides?: ConfigOverrides): Config {
  const config = merge(defaultConfig(env), overrides);
  const first = [...Value.Errors(ConfigSchema, config)][0];
  if (first) {
    const setting = first.path.replace(/^\//, "").replaceAll("/", ".");
    throw new ConfigError(`invalid setting "${setting}": ${first.message} (got ${JSON.stringify(first.value)})`);
  }
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(config.databaseUrl)) {
    throw new ConfigError('invalid setting "databaseUrl": must start with sqlite: or postgres://');
  }
  return config;
}
