import type { ColumnType, Generated } from "kysely";
import type { TaskView } from "../core/tasks/record.js";

/** Row types of the store. Timestamps are Unix seconds; JSON columns hold text. */

type Id = Generated<number>;
type Json = string;

export interface UsersTable {
  id: Id;
  name: string;
  group: string;
  quota: number;
  used_quota: Generated<number>;
  /** How far below zero the balance may go (quota); 0 by default. */
  credit_line: Generated<number>;
  status: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  /** Console sign-in: lower-case, unique where set. */
  email: Generated<string | null>;
  /** Console sign-in: scrypt hash with its parameters (`console/server/passwords.ts`); null = none. */
  password_hash: Generated<string | null>;
  /** Tasks of the user not yet SUCCESS or FAILURE, kept with every insert and terminal move. */
  tasks_unfinished: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface TokensTable {
  id: Id;
  user_id: number;
  name: string;
  key_hash: string;
  /** First characters of the key, for operators to tell tokens apart. */
  key_prefix: string;
  status: string;
  expires_at: number | null;
  quota_limit: number | null;
  used_quota: Generated<number>;
  models: Json | null;
  ip_allow: Json | null;
  created_at: number;
  updated_at: number;
}

export interface ChannelsTable {
  id: Id;
  name: string;
  type: string;
  base_url: string;
  key: string;
  models: Json;
  model_mapping: Json;
  groups: Json;
  priority: number;
  weight: number;
  price_ratio: number;
  status: string;
  status_reason: string;
  settings: Json;
  failure_count: Generated<number>;
  last_error: string | null;
  last_error_at: number | null;
  last_success_at: number | null;
  success_count: Generated<number>;
  request_count: Generated<number>;
  recent_success_rate: Generated<number>;
  /** `round_robin` or `random`: how calls spread over the channel's live keys. */
  key_rotation: Generated<string>;
  /** JSON list of the channel's tags. */
  tags: Generated<Json>;
  created_at: number;
  updated_at: number;
}

/** One upstream key of a channel's pool (migration 016). */
export interface ChannelKeysTable {
  id: Id;
  channel_id: number;
  key: string;
  enabled: Generated<number>;
  dead_reason: string | null;
  dead_at: number | null;
  next_probe_at: number | null;
  probe_failures: Generated<number>;
  calls: Generated<number>;
  failures: Generated<number>;
  last_error: string | null;
  last_error_at: number | null;
  created_at: number;
}

export interface LedgerTable {
  id: Id;
  user_id: number;
  token_id: number | null;
  kind: string;
  amount: number;
  reference: string;
  note: string;
  created_at: number;
}

/** One charge's lifecycle: open until settled or refunded. See docs/architecture.md. */
export interface ChargesTable {
  /** The ledger reference of the charge (`task:<id>`, `content:<id>`, `image:<id>`). */
  reference: string;
  user_id: number;
  token_id: number | null;
  /** `open`, `settled` or `refunded`. */
  state: string;
  /** Quota held by the charge row. */
  held: number;
  /** Quota of the usage seen so far while open (a stream's progress); null while none was seen. */
  seen: number | null;
  /** Quota the charge finally cost once settled. */
  settled: number | null;
  /** Cost above the hold that the credit line did not allow to collect. */
  uncollected: Generated<number>;
  /** Unix milliseconds: past it, the reaper closes the charge. */
  close_by: number;
  /** Name of the instance that opened the charge. */
  instance: string;
  /** Unix milliseconds: a reaper holds the charge until then. */
  lease_until: Generated<number>;
  close_reason: Generated<string>;
  created_at: number;
  closed_at: number | null;
}

/**
 * A task's row: the columns its public record is rendered from (core's TaskView: who, what, its
 * state and times, `properties` and `data` as JSON text), and the engine's own.
 */
export interface TasksTable extends Omit<TaskView, "id"> {
  id: Id;
  token_id: number | null;
  request_body: Json;
  upstream_status: string | null;
  /** Unix milliseconds: when a worker should look at the task next. */
  next_poll_at: number;
  lease_owner: string | null;
  /** Unix milliseconds: the lease of `lease_owner` runs out then. */
  lease_until: number;
  poll_count: Generated<number>;
  callback_secret: string | null;
  /** Where the task's end is announced (webhook); null = the user's default, if any. */
  callback_url: string | null;
  /** Polls in a row that failed (errors, unknown id): drives the backoff. */
  poll_errors: Generated<number>;
  /** Videos: when the owner deleted it (unix seconds; 0 = not deleted). */
  deleted_at: Generated<number>;
  /** Videos: when its stored files were removed (unix seconds; 0 = still stored). */
  files_removed_at: Generated<number>;
}

/** Clips of succeeded tasks, so the actions on a clip can check the caller owns it. */
export interface TaskClipsTable {
  clip_id: string;
  task_id: string;
  user_id: number;
  platform: string;
  model: string;
  created_at: number;
}

/**
 * One recorded moment of a task's life: created, a status move, a channel switch, a failed poll.
 * Rows are written by triggers on `tasks` (migration 012), in the statement that moves the task.
 */
export interface TaskEventsTable {
  id: Id;
  /** `tasks.id` (the row id, not the public task id). */
  task_id: number;
  /** Unix seconds. */
  at: number;
  /** `created`, `status`, `channel` or `poll_failed`. */
  event: string;
  detail: string;
}

export interface RequestLogsTable {
  id: Id;
  created_at: number;
  request_id: string;
  user_id: number | null;
  token_id: number | null;
  channel_id: number | null;
  surface: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  quota: number;
  latency_ms: number;
  status: number;
  error: string | null;
  /** Token buckets (docs/price-model.md); null where the call's surface has no such bucket. */
  input_tokens?: number | null;
  cache_read_tokens?: number | null;
  cache_write_5m_tokens?: number | null;
  cache_write_1h_tokens?: number | null;
  audio_input_tokens?: number | null;
  output_tokens?: number | null;
  reasoning_tokens?: number | null;
  audio_output_tokens?: number | null;
  /** 1: the usage is the gateway's estimate (the upstream reported none). */
  estimated?: number;
}

/** What the usage totals count of the request-log rows of one key (see `usage-aggregates.ts`). */
export interface UsageCounters {
  requests: number;
  /** Rows answered with a status of 400 or more. */
  errors: number;
  /** Quota billed. */
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

/**
 * The request log's totals per UTC day, user, model, channel and surface, kept with every flush of
 * the log and never pruned with it. A row without a user or a channel counts under 0.
 */
export interface UsageDailyTable extends UsageCounters {
  /** Unix seconds of the day's start (UTC). */
  day: number;
  user_id: number;
  model: string;
  channel_id: number;
  surface: string;
}

/** The request log's totals per UTC day and user (0: no user). */
export interface UsageDailyUsersTable extends UsageCounters {
  day: number;
  user_id: number;
}

/** The request log's totals per hour, model, channel and surface, over all users. */
export interface UsageHourlyTable extends UsageCounters {
  /** Unix seconds of the hour's start. */
  hour: number;
  model: string;
  channel_id: number;
  surface: string;
}

export interface PricesTable {
  kind: string;
  name: string;
  /** Currency units per call (tasks, images). */
  price: number;
  /** Currency units per million tokens (content models). */
  input_per_million: number;
  output_per_million: number;
  /** Fraction of the input price charged for cached input tokens (read only by rollbacks; see cache_read_per_million). */
  cached_ratio: number;
  /** What is counted: call, image, second, character, search_unit, tokens. */
  unit: string;
  /** Per-bucket rates of a token price; null falls back (docs/price-model.md). */
  cache_read_per_million: number | null;
  cache_write_5m_per_million: number | null;
  cache_write_1h_per_million: number | null;
  audio_input_per_million: number | null;
  reasoning_per_million: number | null;
  audio_output_per_million: number | null;
  updated_at: number;
}

export interface GroupRatiosTable {
  group: string;
  ratio: number;
  updated_at: number;
}

export interface SettingsTable {
  key: string;
  value: Json;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  token_id: number;
  key: string;
  /** Hash of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  status: string;
  response_status: number | null;
  response_body: Json | null;
  /** Unix milliseconds: the running request's lease; renewed while it runs, taken over after. */
  locked_until: number;
  /** The instance whose request holds the lease. */
  owner: string | null;
  /** The first request's id: every attempt of this key derives its charge reference from it. */
  run_id: string | null;
  /** How many requests have run this key (a takeover after a dead owner adds one). */
  attempts: Generated<number>;
  created_at: number;
  /** Unix seconds: the remembered answer is forgotten then. */
  expires_at: number;
}

export interface WebhookDeliveriesTable {
  id: Id;
  webhook_id: string;
  user_id: number;
  task_id: string;
  url: string;
  event: string;
  status: string;
  attempts: Generated<number>;
  /** Unix milliseconds. */
  next_attempt_at: number;
  lease_owner: string | null;
  /** Unix milliseconds. */
  lease_until: Generated<number>;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  channels: ChannelsTable;
  channel_keys: ChannelKeysTable;
  ledger: LedgerTable;
  charges: ChargesTable;
  tasks: TasksTable;
  task_clips: TaskClipsTable;
  task_events: TaskEventsTable;
  request_logs: RequestLogsTable;
  usage_daily: UsageDailyTable;
  usage_daily_users: UsageDailyUsersTable;
  usage_hourly: UsageHourlyTable;
  prices: PricesTable;
  group_ratios: GroupRatiosTable;
  settings: SettingsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  operators: OperatorsTable;
  console_sessions: ConsoleSessionsTable;
  console_invites: ConsoleInvitesTable;
  user_images: UserImagesTable;
  redemption_batches: RedemptionBatchesTable;
  redemption_codes: RedemptionCodesTable;
  redemption_user_counts: RedemptionUserCountsTable;
  rate_limits: RateLimitsTable;
}

/** An operator's rate limit of a token, a user or a model, or a group's default (migration 017). */
export interface RateLimitsTable {
  scope: string;
  subject: string;
  group_name: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  updated_at: number;
}

/** A console operator account. */
export interface OperatorsTable {
  id: Id;
  name: string;
  password_hash: string;
  status: string;
  created_at: number;
  updated_at: number;
}

/** A signed-in console browser; the cookie holds the id, this row only its SHA-256. */
export interface ConsoleSessionsTable {
  id_hash: string;
  role: string;
  subject_id: number;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  /** Absolute end of the session (Unix seconds); the idle limit is checked against last_seen_at. */
  expires_at: number;
}

/** A one-time link for a user to set a password; only the token's SHA-256 is kept. */
export interface ConsoleInvitesTable {
  token_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** An image a user generated and was given as a stored URL. */
export interface UserImagesTable {
  id: Id;
  user_id: number;
  model: string;
  url: string;
  created_at: number;
}

/** A batch of redemption codes, as an operator generated it (docs/redemption-codes.md). */
export interface RedemptionBatchesTable {
  id: Id;
  /** The name prefix of its codes ("" when none). */
  name: string;
  /** Quota each code credits. */
  quota: number;
  count: number;
  per_user_limit: number | null;
  expires_at: number | null;
  /** `enabled` or `disabled`. */
  status: Generated<string>;
  note: Generated<string>;
  exported_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One redemption code: found by its SHA-256, never kept in full after its batch's export. */
export interface RedemptionCodesTable {
  id: Id;
  batch_id: number;
  code_hash: string;
  /** Its start and end, for lists. */
  shown: string;
  /** The full code until the batch is exported, then null. */
  plain: string | null;
  /** `unused`, `used` or `disabled`. */
  status: Generated<string>;
  user_id: number | null;
  redeemed_at: number | null;
  created_at: number;
}

/** How many codes of a batch a user redeemed. */
export interface RedemptionUserCountsTable {
  batch_id: number;
  user_id: number;
  used: number;
}

export type Timestamp = ColumnType<number, number, number>;
