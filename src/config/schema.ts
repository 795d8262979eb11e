import { type Static, Type } from "@sinclair/typebox";
import { ChannelSettingsSchema } from "../core/channel-settings.js";
import { vendors } from "../upstreams/registry.js";

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
    type: Type.Union(vendors.types.map((t) => Type.Literal(t))),
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
  /**
   * Browser apps allowed to call the client API (`/v1`, `/v1beta`, the task families) from another
   * origin: exact origins (`https://app.example.com`), or `*` for any. Empty (the default): no
   * cross-origin access. The admin API and the console are never opened to other origins.
   */
  cors: Type.Object({ origins: Type.Array(Type.String({ minLength: 1 })) }),
  /** Time limits on what clients send (the answer is never limited by these). */
  http: Type.Object({
    /** Time allowed to send the request's headers (ms). */
    headersTimeoutMs: Type.Integer({ minimum: 10 }),
    /**
     * Time allowed to send the whole request, headers and body (ms): the last bound, long enough
     * for the largest body at a slow but real pace; a body too slow to be real is cut by the rate.
     */
    requestTimeoutMs: Type.Integer({ minimum: 10 }),
    /** Longest pause while a body is being sent (ms). */
    bodyIdleTimeoutMs: Type.Integer({ minimum: 10 }),
    /** Least average pace of a body once its grace is over (bytes a second; 0: none). */
    bodyMinBytesPerSecond: Type.Integer({ minimum: 0 }),
    /** The first time of a body during which no pace is required (ms). */
    bodyRateGraceMs: Type.Integer({ minimum: 10 }),
    /** After an answer given before its body arrived, most bytes of the rest read and discarded. */
    earlyAnswerDrainBytes: Type.Integer({ minimum: 0 }),
    /** After an answer given before its body arrived, longest wait for the rest (ms). */
    earlyAnswerDrainMs: Type.Integer({ minimum: 0 }),
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
   * After SIGTERM, how long /readyz answers 503 while every request is still served (ms), before
   * the listener closes: the time a load balancer needs to see the instance fail its checks and
   * send new requests elsewhere.
   */
  shutdownDelayMs: Type.Integer({ minimum: 0, maximum: 600_000 }),
  /**
   * The drain window once the listener has closed (ms): in-flight requests may finish within it;
   * streams still open at its end end with an error event and are billed for what they produced.
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
    /** Largest result file (audio, video, cover image) copied into storage; a bigger one fails the task (bytes). */
    resultMaxBytes: Type.Integer({ minimum: 1024 }),
    /** Longest copy of one result file into storage before it is retried (ms). */
    resultCopyTimeoutMs: Type.Integer({ minimum: 100 }),
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
  videos: Type.Object({
    /** How long a completed video's stored content is kept after it completed (its `expires_at`), seconds. */
    retentionSeconds: Type.Integer({ minimum: 1 }),
    /** How often the sweeper removes expired and deleted videos' stored files (ms). */
    sweepIntervalMs: Type.Integer({ minimum: 10 }),
    /** Largest reference image (`input_reference`, a file or a fetched URL); a bigger one is a 400 (bytes). */
    referenceMaxBytes: Type.Integer({ minimum: 1024 }),
  }),
  /**
   * How long the rows of the tables that grow with traffic are kept, per kind (days; 0 keeps them
   * for ever), and how the pruner removes the older ones. The ledger is never pruned.
   */
  retention: Type.Object({
    /** The request log. On PostgreSQL a month is dropped whole once all of it is older. */
    requestLogDays: Type.Integer({ minimum: 0, maximum: 36_500 }),
    /** Task histories (status moves, channel switches, failed polls). */
    taskEventDays: Type.Integer({ minimum: 0, maximum: 36_500 }),
    /** Webhook deliveries that ended (delivered or given up); pending ones are always kept. */
    webhookDeliveryDays: Type.Integer({ minimum: 0, maximum: 36_500 }),
    /** How often the pruner runs (ms). */
    intervalMs: Type.Integer({ minimum: 1000 }),
    /** Most rows one delete removes. */
    batchRows: Type.Integer({ minimum: 1, maximum: 100_000 }),
    /** Pause between two deletes (ms), so that the requests' own writes go between them. */
    batchPauseMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
  }),
  uploads: Type.Object({
    /** Allow UPLOAD URLs on loopback / private ranges (tests, trusted networks). */
    allowPrivateUrls: Type.Boolean(),
    /** Largest audio file an UPLOAD brings in; a bigger one is a 400 naming `url` (bytes). */
    maxBytes: Type.Integer({ minimum: 1024 }),
    /** Longest download of an UPLOAD's file (ms). */
    fetchTimeoutMs: Type.Integer({ minimum: 100 }),
  }),
  /** Where stored files (images, task results, uploads) live and how they are downloaded. */
  blobs: Type.Object({
    /**
     * `file://<folder>` or `s3://<bucket>/<optional prefix>` (checked by `blobLocation`); null
     * means `file://<dataDir>/blobs`. Instances behind one load balancer share one bucket.
     */
    url: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()]),
    /**
     * `proxy`: the gateway streams the bytes (Range honoured). `redirect` (S3 only): the gateway
     * answers 302 to a short-lived presigned URL of the bucket.
     */
    downloads: Type.Union([Type.Literal("proxy"), Type.Literal("redirect")]),
  }),
  /** The S3-compatible service of an `s3://` BLOB_URL. */
  s3: Type.Object({
    /** The service's URL (MinIO, R2, a local server); null: AWS itself, found from the region. */
    endpoint: Type.Union([Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2000 }), Type.Null()]),
    region: Type.String({ minLength: 1, maxLength: 100 }),
    /** Secrets, from the environment only; both null: the SDK's own chain (AWS_* variables, roles). */
    accessKeyId: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    secretAccessKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    /** `<endpoint>/<bucket>/<key>` rather than `<bucket>.<endpoint>/<key>` (most non-AWS services). */
    forcePathStyle: Type.Boolean(),
    /** How long the start-up check of the bucket may take before the start fails (ms). */
    checkTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
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
  /** The console's accounts and sessions (docs/console-security.md). */
  console: Type.Object({
    /**
     * Secret that signs the session cookie; when null one is generated on the first start and
     * kept in the store, so every instance of a store signs alike.
     */
    cookieSecret: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
    /** scrypt cost as a power of two (N = 2^cost). Below 15 only for tests. */
    passwordCost: Type.Integer({ minimum: 4, maximum: 20 }),
    /** A session unused this long ends (seconds). */
    sessionIdleSeconds: Type.Integer({ minimum: 60 }),
    /** A session ends this long after sign-in, used or not (seconds). */
    sessionMaxSeconds: Type.Integer({ minimum: 60 }),
    /** Failed sign-ins of one account within 15 minutes before it is slowed. */
    loginFailuresPerAccount: Type.Integer({ minimum: 1 }),
    /** Failed sign-ins from one address within 15 minutes before it is slowed. */
    loginFailuresPerAddress: Type.Integer({ minimum: 1 }),
    /** How long an invite link works (seconds). */
    inviteSeconds: Type.Integer({ minimum: 60 }),
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
