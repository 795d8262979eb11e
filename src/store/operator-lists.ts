import { type Kysely, sql } from "kysely";
import { channelLatencyP50 } from "./request-logs.js";
import type { Database } from "./schema.js";
import { taskHistory } from "./task-events.js";
import { type SeriesQuery, spendSeries } from "./usage-series.js";
import { type UsageQuery, usageTotals } from "./usage-totals.js";

/** Filters of the operators' task list; every field optional, `after` pages by id. */
export interface TaskListFilter {
  userId?: number;
  status?: string;
  platform?: string;
  channelId?: number;
  taskId?: string;
  after?: number;
  limit: number;
}

/**
 * Tasks with their routing, for operators, oldest first. Every filter has an index of its own
 * ending in `id` (migration 012), so a page walks one index in id order from the cursor.
 */
export function taskListQuery(db: Kysely<Database>, f: TaskListFilter) {
  let query = db.selectFrom("tasks").selectAll();
  if (f.userId !== undefined) query = query.where("user_id", "=", f.userId);
  if (f.status !== undefined) query = query.where("status", "=", f.status);
  if (f.platform !== undefined) query = query.where("platform", "=", f.platform);
  if (f.channelId !== undefined) query = query.where("channel_id", "=", f.channelId);
  if (f.taskId !== undefined) query = query.where("task_id", "=", f.taskId);
  if (f.after !== undefined) query = query.where("id", ">", f.after);
  return query.orderBy("id").limit(f.limit);
}

export function listTasks(db: Kysely<Database>, f: TaskListFilter) {
  return taskListQuery(db, f).execute();
}

/** Filters of the operators' webhook delivery list. */
export interface DeliveryListFilter {
  userId?: number;
  taskId?: string;
  status?: string;
  after?: number;
  limit: number;
}

/** Webhook deliveries, for operators, oldest first. */
export function listWebhookDeliveries(db: Kysely<Database>, f: DeliveryListFilter) {
  let query = db.selectFrom("webhook_deliveries").selectAll();
  if (f.userId !== undefined) query = query.where("user_id", "=", f.userId);
  if (f.taskId !== undefined) query = query.where("task_id", "=", f.taskId);
  if (f.status !== undefined) query = query.where("status", "=", f.status);
  if (f.after !== undefined) query = query.where("id", ">", f.after);
  return query.orderBy("id").limit(f.limit).execute();
}

/** A task by its public id, for operators (every field). */
export function findTask(db: Kysely<Database>, taskId: string) {
  return db.selectFrom("tasks").selectAll().where("task_id", "=", taskId).executeTakeFirst();
}

/** `%`, `_` and the escape itself taken literally in a LIKE pattern. */
function likeContaining(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Users whose name or email contains `q` (any case), oldest first, paged by id. */
export function searchUsers(db: Kysely<Database>, f: { q?: string; after?: number; limit: number }) {
  let query = db.selectFrom("users").selectAll();
  if (f.q) {
    const pattern = likeContaining(f.q);
    // Emails are kept lower-case.
    query = query.where(sql<boolean>`(lower(name) like ${pattern} escape '\\' or email like ${pattern} escape '\\')`);
  }
  if (f.after !== undefined) query = query.where("id", ">", f.after);
  return query.orderBy("id").limit(f.limit).execute();
}

/** Filters of the request log browser; `after` is the id of the last row of the previous page. */
export interface RequestLogFilter {
  userId?: number;
  channelId?: number;
  model?: string;
  status?: number;
  after?: number;
  limit: number;
}

/** Request-log rows, newest first; each filter walks an index ending in `id`. */
export function requestLogQuery(db: Kysely<Database>, f: RequestLogFilter) {
  let query = db.selectFrom("request_logs").selectAll();
  if (f.userId !== undefined) query = query.where("user_id", "=", f.userId);
  if (f.channelId !== undefined) query = query.where("channel_id", "=", f.channelId);
  if (f.model !== undefined) query = query.where("model", "=", f.model);
  if (f.status !== undefined) query = query.where("status", "=", f.status);
  if (f.after !== undefined) query = query.where("id", "<", f.after);
  return query.orderBy("id", "desc").limit(f.limit);
}

export function listRequestLogs(db: Kysely<Database>, f: RequestLogFilter) {
  return requestLogQuery(db, f).execute();
}

/** Tasks per state, over every task. */
export async function tasksByState(db: Kysely<Database>): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom("tasks")
    .select((eb) => ["status", eb.fn.countAll<number | string>().as("n")])
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Charges still open: how many and the quota they hold. */
export async function openCharges(db: Kysely<Database>): Promise<{ count: number; quota: number }> {
  const row = await db
    .selectFrom("charges")
    .select((eb) => [eb.fn.countAll<number | string>().as("n"), eb.fn.sum<number | string | null>("held").as("held")])
    .where("state", "=", "open")
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), quota: Number(row.held ?? 0) };
}

/**
 * Queues a delivery again: pending, due now, lease dropped. The dispatcher makes one more attempt
 * at once; past the delivery's age limit a failed attempt marks it failed again. A delivered one
 * is left as it is (undefined).
 */
export function requeueDelivery(db: Kysely<Database>, id: number, nowMs: number) {
  return db
    .updateTable("webhook_deliveries")
    .set({ status: "pending", next_attempt_at: nowMs, lease_owner: null, lease_until: 0 })
    .where("id", "=", id)
    .where("status", "in", ["pending", "failed"])
    .returningAll()
    .executeTakeFirst();
}

/** A delivery by id. */
export function findDelivery(db: Kysely<Database>, id: number) {
  return db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Every read and requeue of the operators' views, over one store. */
export function operatorListsOf(db: Kysely<Database>) {
  return {
    tasks: (f: TaskListFilter) => listTasks(db, f),
    task: (taskId: string) => findTask(db, taskId),
    taskHistory: (taskRowId: number) => taskHistory(db, taskRowId),
    webhookDeliveries: (f: DeliveryListFilter) => listWebhookDeliveries(db, f),
    requeueDelivery: (id: number, nowMs: number) => requeueDelivery(db, id, nowMs),
    delivery: (id: number) => findDelivery(db, id),
    users: (f: { q?: string; after?: number; limit: number }) => searchUsers(db, f),
    requestLogs: (f: RequestLogFilter) => listRequestLogs(db, f),
    series: (q: SeriesQuery) => spendSeries(db, q),
    usage: (q: UsageQuery) => usageTotals(db, q),
    tasksByState: () => tasksByState(db),
    openCharges: () => openCharges(db),
    latencyP50: (channelIds: number[]) => channelLatencyP50(db, channelIds),
  };
}

/** The operators' views, as the admin API uses them. */
export type OperatorLists = ReturnType<typeof operatorListsOf>;
