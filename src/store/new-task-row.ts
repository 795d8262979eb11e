import type { Insertable } from "kysely";
import type { NewTask } from "../core/tasks/ports.js";
import type { TasksTable } from "./schema.js";

// A new task's row, written once here and rendered into each statement that inserts it: SQLite's
// prepared insert (a `?` per value), PostgreSQL's one-statement submit (a typed `$n` per value)
// and the query builder's insert inside a transaction (the row as an object), as
// ledger-guards.ts renders the hold rule for both engines.

/** What a new task's row is made of: the submit's fields, and the time of the submit. */
const INPUTS = {
  taskId: "text",
  platform: "text",
  userId: "bigint",
  tokenId: "bigint",
  group: "text",
  channelId: "bigint",
  quota: "bigint",
  action: "text",
  properties: "text",
  requestBody: "text",
  sendDeadlineMs: "bigint",
  callbackSecret: "text",
  callbackUrl: "text",
  now: "bigint",
} as const;

/** A value a new task's row takes from its submit (its PostgreSQL type in INPUTS). */
type TaskInput = keyof typeof INPUTS;

/** A column's value: one of the submit's, or the same for every new task (a constant in the SQL). */
type Source = { input: TaskInput } | { fixed: string | number | null };

/** The columns of a new task's row (NOT_START, nothing sent yet), in the order every statement lists them. */
const COLUMNS: [keyof TasksTable, Source][] = [
  ["task_id", { input: "taskId" }],
  ["platform", { input: "platform" }],
  ["user_id", { input: "userId" }],
  ["token_id", { input: "tokenId" }],
  ["group", { input: "group" }],
  ["channel_id", { input: "channelId" }],
  ["quota", { input: "quota" }],
  ["action", { input: "action" }],
  ["status", { fixed: "NOT_START" }],
  ["fail_reason", { fixed: "" }],
  ["result_url", { fixed: null }],
  ["submit_time", { input: "now" }],
  ["start_time", { fixed: 0 }],
  ["finish_time", { fixed: 0 }],
  ["progress", { fixed: "0%" }],
  ["properties", { input: "properties" }],
  ["data", { fixed: "{}" }],
  ["request_body", { input: "requestBody" }],
  ["upstream_id", { fixed: null }],
  ["upstream_status", { fixed: null }],
  ["next_poll_at", { input: "sendDeadlineMs" }],
  ["lease_owner", { fixed: null }],
  ["lease_until", { fixed: 0 }],
  ["callback_secret", { input: "callbackSecret" }],
  ["callback_url", { input: "callbackUrl" }],
  ["created_at", { input: "now" }],
  ["updated_at", { input: "now" }],
];

/** The submit's values by name. */
function inputsOf(task: NewTask, now: number): Record<TaskInput, string | number | null> {
  return {
    taskId: task.taskId,
    platform: task.platform,
    userId: task.userId,
    tokenId: task.tokenId,
    group: task.group,
    channelId: task.channelId,
    quota: task.quota,
    action: task.action,
    properties: task.properties,
    requestBody: task.requestBody,
    sendDeadlineMs: task.sendDeadlineMs,
    callbackSecret: task.callbackSecret,
    callbackUrl: task.callbackUrl ?? null,
    now,
  };
}

/** A constant as SQL. */
function literal(value: string | number | null): string {
  if (value === null) return "null";
  return typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;
}

/** `insert into tasks (...) values (...)` with each submit's value rendered by `param`. */
function insertSql(param: (input: TaskInput) => string): string {
  // `group` is a keyword of SQL: quoted as a column name.
  const names = COLUMNS.map(([name]) => (name === "group" ? `"group"` : name)).join(", ");
  const values = COLUMNS.map(([, s]) => ("input" in s ? param(s.input) : literal(s.fixed))).join(", ");
  return `insert into tasks (${names}) values (${values})`;
}

/** The query builder's row of a new task. */
export function newTaskValues(task: NewTask, now: number): Insertable<TasksTable> {
  const inputs = inputsOf(task, now);
  return Object.fromEntries(
    COLUMNS.map(([name, s]) => [name, "input" in s ? inputs[s.input] : s.fixed]),
  ) as unknown as Insertable<TasksTable>;
}

/** SQLite's insert of a new task, a `?` per value, and its parameters in their order. */
export const sqliteTaskInsert = {
  sql: insertSql(() => "?"),
  params(task: NewTask, now: number): (string | number | null)[] {
    const inputs = inputsOf(task, now);
    return COLUMNS.flatMap(([, s]) => ("input" in s ? [inputs[s.input]] : []));
  },
};

/**
 * PostgreSQL's insert of a new task, for a statement that also has other parameters: the values
 * `shared` names take the parameter numbers given there (the statement's user, token and time),
 * the others are numbered from `first` in the order they appear. `params` gives those others'
 * values in their numbers' order.
 */
export function pgTaskInsert(shared: Partial<Record<TaskInput, number>>, first: number) {
  const numbers = new Map<TaskInput, number>(Object.entries(shared) as [TaskInput, number][]);
  const own: TaskInput[] = [];
  for (const [, s] of COLUMNS) {
    if (!("input" in s) || numbers.has(s.input)) continue;
    numbers.set(s.input, first + own.length);
    own.push(s.input);
  }
  return {
    sql: insertSql((input) => `$${numbers.get(input)}::${INPUTS[input]}`),
    params(task: NewTask, now: number): (string | number | null)[] {
      const inputs = inputsOf(task, now);
      return own.map((input) => inputs[input]);
    },
  };
}
