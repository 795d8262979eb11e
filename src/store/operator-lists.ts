import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** Filters of the operators' task list; every field optional, `after` pages by id. */
export interface TaskListFilter {
  userId?: number;
  status?: string;
  platform?: string;
  taskId?: string;
  after?: number;
  limit: number;
}

/** Tasks with their routing, for operators, oldest first. */
export function listTasks(db: Kysely<Database>, f: TaskListFilter) {
  let query = db.selectFrom("tasks").selectAll();
  if (f.userId !== undefined) query = query.where("user_id", "=", f.userId);
  if (f.status !== undefined) query = query.where("status", "=", f.status);
  if (f.platform !== undefined) query = query.where("platform", "=", f.platform);
  if (f.taskId !== undefined) query = query.where("task_id", "=", f.taskId);
  if (f.after !== undefined) query = query.where("id", ">", f.after);
  return query.orderBy("id").limit(f.limit).execute();
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
